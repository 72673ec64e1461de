#include "harness/train/optimizer.h"

namespace attnbench::train {

bool decays(const std::string& name, const torch::Tensor& param) {
  if (param.dim() < 2) return false;
  // The leaf name: "blocks.0.attn.core.distance_bias" -> "distance_bias".
  std::string leaf = name.substr(name.rfind('.') + 1);
  // Biases (including the [H, W] distance-bias table) and the elastic offsets (tau, and the
  // per-token tau map, whose zero init is its neutral value) are not shrunk toward 0.
  return leaf.find("bias") == std::string::npos && name.find("tau") == std::string::npos;
}

std::unique_ptr<torch::optim::AdamW> make_adamw(torch::nn::Module& model,
                                                const config::TrainConfig& t) {
  std::vector<torch::Tensor> decay, no_decay;
  for (const auto& item : model.named_parameters()) {
    (decays(item.key(), item.value()) ? decay : no_decay).push_back(item.value());
  }
  auto options = [&](double wd) {
    return torch::optim::AdamWOptions(t.lr)
        .betas(std::make_tuple(t.beta1, t.beta2))
        .eps(t.adam_eps)
        .weight_decay(wd);
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, std::make_unique<torch::optim::AdamWOptions>(options(t.weight_decay)));
  groups.emplace_back(no_decay, std::make_unique<torch::optim::AdamWOptions>(options(0.0)));
  return std::make_unique<torch::optim::AdamW>(std::move(groups), options(0.0));
}

void set_learning_rate(torch::optim::AdamW& optimizer, double lr) {
  for (auto& g : optimizer.param_groups()) {
    static_cast<torch::optim::AdamWOptions&>(g.options()).lr(lr);
  }
}

}  // namespace attnbench::train
