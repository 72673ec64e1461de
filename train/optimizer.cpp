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

// decay_plan, given the variant modules' decisions.
std::vector<std::pair<std::string, bool>> plan_from(
    torch::nn::Module& model, const std::map<const c10::TensorImpl*, bool>& by_variant) {
  std::vector<std::pair<std::string, bool>> plan;
  for (const auto& item : model.named_parameters()) {
    auto it = by_variant.find(item.value().unsafeGetTensorImpl());
    plan.emplace_back(item.key(),
                      it != by_variant.end() ? it->second : decays(item.key(), item.value()));
  }
  return plan;
}
}  // namespace

std::vector<std::pair<std::string, bool>> decay_plan(torch::nn::Module& model) {
  return plan_from(model, variant_decisions(model));
}

namespace {
// make_adamw's groups, in order: the first two at lr, any after them (the attention variant's own
// parameters, with attention_lr_scale != 1) at lr * attention_lr_scale.
constexpr size_t kBaseGroups = 2;
}  // namespace

std::unique_ptr<torch::optim::AdamW> make_adamw(torch::nn::Module& model,
                                                const config::TrainConfig& t) {
  const bool separate = t.attention_lr_scale != 1.0;
  const auto by_variant = variant_decisions(model);
  std::vector<torch::Tensor> decay, no_decay, attention_decay, attention_no_decay;
  const auto params = model.named_parameters();
  const auto plan = plan_from(model, by_variant);  // the variant modules walked once
  for (size_t i = 0; i < plan.size(); ++i) {
    const torch::Tensor& p = params[plan[i].first];
    const bool attention = separate && by_variant.count(p.unsafeGetTensorImpl()) > 0;
    (attention ? (plan[i].second ? attention_decay : attention_no_decay)
               : (plan[i].second ? decay : no_decay))
        .push_back(p);
  }
  auto options = [&](double wd, double lr) {
    return torch::optim::AdamWOptions(lr)
        .betas(std::make_tuple(t.beta1, t.beta2))
        .eps(t.adam_eps)
        .weight_decay(wd);
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, std::make_unique<torch::optim::AdamWOptions>(options(t.weight_decay, t.lr)));
  groups.emplace_back(no_decay, std::make_unique<torch::optim::AdamWOptions>(options(0.0, t.lr)));
  const double attention_lr = t.lr * t.attention_lr_scale;
  for (auto [members, wd] : {std::pair{&attention_decay, t.weight_decay},
                             std::pair{&attention_no_decay, 0.0}}) {
    if (members->empty()) continue;
    groups.emplace_back(*members, std::make_unique<torch::optim::AdamWOptions>(options(wd, attention_lr)));
  }
  return std::make_unique<torch::optim::AdamW>(std::move(groups), options(0.0, t.lr));
}

void set_learning_rate(torch::optim::AdamW& optimizer, double lr, const config::TrainConfig& t) {
  auto& groups = optimizer.param_groups();
  for (size_t g = 0; g < groups.size(); ++g) {
    static_cast<torch::optim::AdamWOptions&>(groups[g].options())
        .lr(g < kBaseGroups ? lr : lr * t.attention_lr_scale);
  }
}

}  // namespace attnbench::train
