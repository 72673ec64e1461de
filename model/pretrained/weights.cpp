#include "model/pretrained/weights.h"

namespace attnbench::model::pretrained {

void fill(WeightSource& w, const std::string& name, torch::Tensor& param) {
  torch::NoGradGuard no_grad;
  w.take_into(name, param);
}

void fill_if(WeightSource& w, const std::string& name, torch::Tensor& param) {
  if (param.defined()) fill(w, name, param);
}

bool ends_with(const std::string& name, const std::string& suffix) {
  return name.size() >= suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void fill_norm(WeightSource& w, const std::string& prefix, NormWeights& norm) {
  fill(w, prefix + ".weight", norm.weight);
  fill_if(w, prefix + ".bias", norm.bias);
}

}  // namespace attnbench::model::pretrained
