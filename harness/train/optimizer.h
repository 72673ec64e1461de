// AdamW as DESIGN.md sets it: betas (0.9, 0.95), weight decay on matrices only. Two parameter
// groups: "decay" = 2-D weights (projections, embedding, LM head, per-token tau projection excluded),
// "no decay" = everything else (RMSNorm weights, biases, tau, the distance-bias table, which is
// 2-D but a bias).
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>

#include "core/config/run_config.h"

namespace attnbench::train {

// True for the parameters that receive weight decay, by name (as in named_parameters()) and shape.
bool decays(const std::string& name, const torch::Tensor& param);

std::unique_ptr<torch::optim::AdamW> make_adamw(torch::nn::Module& model,
                                                const config::TrainConfig& train);

// Sets every group's learning rate (the schedule is applied before each step).
void set_learning_rate(torch::optim::AdamW& optimizer, double lr);

}  // namespace attnbench::train
