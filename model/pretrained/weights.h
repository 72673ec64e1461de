// Helpers the architecture files share to fill a PretrainedLM from a WeightSource.
#pragma once
#include <string>

#include "model/pretrained/pretrained_lm.h"

namespace attnbench::model::pretrained {

// Copies the tensor `name` into `param`, which has its shape.
void fill(WeightSource& w, const std::string& name, torch::Tensor& param);
// The same when `param` is defined (an optional bias), else nothing.
void fill_if(WeightSource& w, const std::string& name, torch::Tensor& param);
// Whether `name` ends with `suffix` (std::string::ends_with is C++20).
bool ends_with(const std::string& name, const std::string& suffix);
// A norm's weight (and bias for LayerNorm) from `<prefix>.weight` and `<prefix>.bias`.
void fill_norm(WeightSource& w, const std::string& prefix, NormWeights& norm);

}  // namespace attnbench::model::pretrained
