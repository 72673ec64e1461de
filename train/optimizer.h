// AdamW (docs/training.md, "What a step does"): betas (0.9, 0.95), weight decay on matrices only.
// Two parameter groups, "decay" and "no decay". An attention variant's own parameters (those of its
// module, variants/variant.h) decay as its registration says (variants/registry.h; default: none);
// every other parameter decays when it is a matrix (projections, embedding, LM head), not when it
// is a vector (RMSNorm weights) or a bias. With train.attention_lr_scale != 1 the variant's own
// parameters form two more groups, "attention decay" and "attention no decay", at lr times that
// scale (with the default, the two groups a checkpoint's optimizer state holds are unchanged).
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/config/run_config.h"

namespace attnbench::train {

// The rule for parameters outside attention variants, by name (as in named_parameters()) and shape.
bool decays(const std::string& name, const torch::Tensor& param);

// Every parameter of `model` (named_parameters() order) with whether it takes weight decay.
std::vector<std::pair<std::string, bool>> decay_plan(torch::nn::Module& model);

std::unique_ptr<torch::optim::AdamW> make_adamw(torch::nn::Module& model,
                                                const config::TrainConfig& train);

// Sets every group's learning rate: `lr`, times train.attention_lr_scale for the attention groups
// (the schedule is applied before each step).
void set_learning_rate(torch::optim::AdamW& optimizer, double lr, const config::TrainConfig& train);

}  // namespace attnbench::train
