// Shared by the variant tests: building a variant from a registered name plus overrides, the way
// the model does (config::resolve_params, then make_variant), in float64.
#pragma once
#include <torch/torch.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/config/attention_schema.h"
#include "variants/registry.h"

namespace attnbench::variants::test {

struct Case {
  std::string variant;
  config::ParamMap overrides;
  std::string label() const {
    std::string s = variant;
    for (auto& [k, v] : overrides) s += " " + k + "=" + config::to_string(v);
    return s;
  }
};

inline VariantContext context(const Case& c, int64_t n_head, int64_t head_dim, int64_t d_model,
                              const std::string& backend = "eager") {
  VariantContext ctx;
  ctx.n_head = n_head;
  ctx.head_dim = head_dim;
  ctx.d_model = d_model;
  ctx.context_length = 64;
  ctx.attention.variant = c.variant;
  ctx.attention.backend = backend;
  ctx.attention.params = config::resolve_params(c.variant, c.overrides);
  return ctx;
}

inline std::shared_ptr<AttentionVariantImpl> build(const Case& c, int64_t n_head, int64_t head_dim,
                                                   int64_t d_model,
                                                   const std::string& backend = "eager") {
  auto m = make_variant(context(c, n_head, head_dim, d_model, backend));
  m->to(torch::kFloat64);
  return m;
}

// A variant call's inputs, drawn in float64 from `seed`: q, k, v [B, H, T, D] (q times q_scale)
// and the layer input x [B, T, C].
struct Inputs {
  torch::Tensor q, k, v, x;
};
inline Inputs draw_inputs(uint64_t seed, int64_t B, int64_t H, int64_t T, int64_t D, int64_t C,
                          double q_scale = 1.0) {
  torch::manual_seed(seed);
  const auto f64 = torch::kFloat64;
  return {q_scale * torch::randn({B, H, T, D}, f64), torch::randn({B, H, T, D}, f64),
          torch::randn({B, H, T, D}, f64), torch::randn({B, T, C}, f64)};
}

// The largest absolute difference of two tensors of one shape.
inline double max_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

// The module's parameters by name (distance_bias, tau, tau_proj.weight, tau_proj.bias).
inline std::map<std::string, torch::Tensor> params_of(const torch::nn::Module& m) {
  std::map<std::string, torch::Tensor> out;
  for (auto& p : m.named_parameters()) out[p.key()] = p.value();
  return out;
}

// Sets the module's parameter `name` to `value` (outside autograd).
inline void set_param(torch::nn::Module& m, const std::string& name, const torch::Tensor& value) {
  torch::NoGradGuard no_grad;
  params_of(m).at(name).copy_(value);
}

// Learnable parameters drawn away from their initial values, so that the tests see biases and
// offsets that matter: thresholds that zero some weights and keep others.
inline void randomize_parameters(torch::nn::Module& m, const config::ParamMap& cfg) {
  torch::NoGradGuard no_grad;
  auto form = cfg.count("tau_form") ? std::get<std::string>(cfg.at("tau_form")) : "";
  bool unscaled = cfg.count("tau_scale") && std::get<std::string>(cfg.at("tau_scale")) == "none";
  for (auto& p : m.named_parameters()) {
    auto t = p.value();
    if (p.key() == "distance_bias") {
      t.normal_(0.0, 0.5);
    } else if (p.key() == "tau") {
      form == "per_head_const" ? t.uniform_(-0.3, 0.1) : t.uniform_(-1.5, 0.5);
    } else if (p.key() == "tau_proj.weight") {
      t.normal_(0.0, unscaled ? 0.05 : 0.3);
    } else if (p.key() == "tau_proj.bias") {
      unscaled ? t.uniform_(-0.3, 0.05) : t.uniform_(-1.0, 0.3);
    } else {
      t.add_(torch::randn_like(t) * 0.3);  // any other variant's parameter: moved off its init
    }
  }
}

// Every family option: each position, each normaliser, each tau form and scale, renormalisation
// on and off (bias_window 3 so that distances beyond the window occur at T > 3).
inline std::vector<Case> all_cases() {
  using V = config::Value;
  return {
      {"softmax", {}},
      {"softmax", {{"rope_theta", V{500.0}}}},
      {"softmax", {{"position", V{std::string("none")}}}},
      {"softmax", {{"position", V{std::string("distance_bias")}}, {"bias_window", V{int64_t{4}}}}},
      {"alibi", {}},
      {"rope_bias", {{"bias_window", V{int64_t{3}}}}},
      {"elastic", {}},
      {"elastic", {{"renormalize", V{true}}}},
      {"elastic", {{"tau_form", V{std::string("per_token")}}}},
      {"elastic", {{"tau_form", V{std::string("per_token")}}, {"renormalize", V{true}}}},
      {"elastic", {{"tau_form", V{std::string("per_token")}}, {"tau_scale", V{std::string("none")}}}},
      {"elastic", {{"tau_form", V{std::string("per_head_const")}}}},
      {"elastic", {{"tau_form", V{std::string("per_head_const")}}, {"renormalize", V{true}}}},
      {"elastic", {{"position", V{std::string("alibi")}}}},
      {"lazy", {{"bias_window", V{int64_t{3}}}}},
      {"lazy", {{"bias_window", V{int64_t{3}}}, {"renormalize", V{true}}}},
      // The sink cures of the family, composed with other positions and normalisers.
      {"softmax1", {{"position", V{std::string("alibi")}}}},
      {"sink_logit", {{"position", V{std::string("rope+distance_bias")}}, {"bias_window", V{int64_t{3}}}}},
      {"ssmax", {{"position", V{std::string("alibi")}}}},
      {"ssmax", {{"normalizer", V{std::string("elastic")}}}},
      {"forgetting", {{"position", V{std::string("rope+distance_bias")}}, {"bias_window", V{int64_t{3}}}}},
      {"forgetting", {{"normalizer", V{std::string("elastic")}}, {"renormalize", V{true}}}},
      {"gated", {{"output_gate", V{std::string("headwise")}}}},
      {"lazy", {{"bias_window", V{int64_t{3}}}, {"output_gate", V{std::string("elementwise")}}}},
  };
}

// Every registered variant at its defaults (variants::registered_variants()), then the family
// options of all_cases() that are not a variant's defaults: the property tests iterate these, so
// that a new variant file is tested without a new test.
inline std::vector<Case> registered_cases() {
  std::vector<Case> out;
  for (const auto& name : registered_variants()) out.push_back({name, {}});
  for (auto& c : all_cases()) {
    if (!c.overrides.empty()) out.push_back(std::move(c));
  }
  return out;
}

}  // namespace attnbench::variants::test
