#include "train/optimizer.h"

#include <map>

#include "variants/registry.h"

namespace attnbench::train {

bool decays(const std::string& name, const torch::Tensor& param) {
  const std::string leaf = name.substr(name.rfind('.') + 1);  // "blocks.0.attn.q.weight" -> "weight"
  return param.dim() >= 2 && leaf != "bias";
}

namespace {
// The decision for each parameter owned by an attention variant module, keyed by its storage:
// asked of the variant's registration with the parameter's name inside that module.
std::map<const c10::TensorImpl*, bool> variant_decisions(torch::nn::Module& model) {
  std::map<const c10::TensorImpl*, bool> out;
  for (const auto& module : model.modules(/*include_self=*/true)) {
    const auto* variant = dynamic_cast<const variants::AttentionVariantImpl*>(module.get());
    if (!variant) continue;
    for (const auto& p : variant->named_parameters(/*recurse=*/true)) {
      out[p.value().unsafeGetTensorImpl()] =
          variants::variant_parameter_decays(*variant, p.key(), p.value());
    }
  }
  return out;
}
}  // namespace

std::vector<std::pair<std::string, bool>> decay_plan(torch::nn::Module& model) {
  const auto by_variant = variant_decisions(model);
  std::vector<std::pair<std::string, bool>> plan;
  for (const auto& item : model.named_parameters()) {
    auto it = by_variant.find(item.value().unsafeGetTensorImpl());
    plan.emplace_back(item.key(),
                      it != by_variant.end() ? it->second : decays(item.key(), item.value()));
  }
  return plan;
}

std::unique_ptr<torch::optim::AdamW> make_adamw(torch::nn::Module& model,
                                                const config::TrainConfig& t) {
  std::vector<torch::Tensor> decay, no_decay;
  const auto params = model.named_parameters();
  const auto plan = decay_plan(model);
  for (size_t i = 0; i < plan.size(); ++i) {
    (plan[i].second ? decay : no_decay).push_back(params[plan[i].first]);
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
