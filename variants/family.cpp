#include "variants/family.h"

#include <algorithm>

#include "core/common/error.h"
#include "variants/eager.h"

namespace attnbench::variants {
namespace {

using config::ParamSpec;
using config::ValueType;

// A resolved parameter of the variant (the config layer has checked types against the schema).
template <typename T>
T param(const VariantContext& ctx, const std::string& key) {
  return config::param<T>(ctx.attention.params, key);
}

ParamSpec choice(std::string name, std::string def, std::vector<std::string> allowed,
                 std::string doc) {
  ParamSpec p;
  p.name = std::move(name);
  p.type = ValueType::String;
  p.default_value = std::move(def);
  p.allowed = std::move(allowed);
  p.doc = std::move(doc);
  return p;
}

ParamSpec number(std::string name, ValueType type, config::Value def, std::optional<double> min,
                 std::string doc) {
  ParamSpec p;
  p.name = std::move(name);
  p.type = type;
  p.default_value = std::move(def);
  p.min = min;
  p.doc = std::move(doc);
  return p;
}

}  // namespace

config::VariantSchema family_schema(std::string name, std::string description,
                                    const FamilyDefaults& d) {
  const std::pair<std::string, std::vector<std::string>> elastic{"normalizer", {"elastic"}};
  std::vector<ParamSpec> ps;
  ps.push_back(choice("position", d.position, kPositionOptions,
                      "positional part of the scores: rotary q/k (rope), additive ALiBi slopes, a "
                      "learnable per-head distance bias b[h, i-j], or RoPE plus that bias"));
  ps.push_back(number("rope_theta", ValueType::Float, d.rope_theta, 1.0,
                      "RoPE base: dimension pair d rotates at pos * theta^(-2d/D)"));
  ps.back().applies_if = {{"position", {"rope", "rope+distance_bias"}}};
  ps.push_back(number("bias_window", ValueType::Int, d.bias_window, 1.0,
                      "W: distances i-j < W get a learned bias b[h, i-j] (init 0, float32), "
                      "distances >= W get none"));
  ps.back().applies_if = {{"position", {"distance_bias", "rope+distance_bias"}}};
  ps.push_back(choice("normalizer", d.normalizer, {"softmax", "elastic"},
                      "softmax, or Elastic-Softmax a = ReLU(p + t) with p the causal softmax"));
  ps.push_back(choice("tau_form", d.tau_form, kTauForms,
                      "elastic offset t: tau_h / n_i (per_head_over_len), g_h(x_i) / n_i with g "
                      "linear (per_token), or tau_h (per_head_const); n_i = i + 1 visible keys"));
  ps.back().applies_if = {elastic};
  ps.push_back(number("tau_init", ValueType::Float, d.tau_init, std::nullopt,
                      "initial tau (per-token: initial bias of g, weights 0); -1 keeps only "
                      "weights above the uniform share 1/n_i"));
  ps.back().applies_if = {elastic};
  ps.push_back(choice("tau_scale", d.tau_scale, kTauScales,
                      "per-token offset divided by n_i (inv_len) or used as is (none)"));
  ps.back().applies_if = {elastic, {"tau_form", {"per_token"}}};
  ParamSpec renorm;
  renorm.name = "renormalize";
  renorm.type = ValueType::Bool;
  renorm.default_value = d.renormalize;
  renorm.doc = "divide the elastic weights by their row sum (a row summing to 0 outputs 0); the "
               "paper does not";
  renorm.applies_if = {elastic};
  ps.push_back(std::move(renorm));
  return {std::move(name), std::move(description), std::move(ps), {check_rope_head_dim}};
}

VariantRegistration family_registration(std::string name, std::string description,
                                        const FamilyDefaults& defaults) {
  return {family_schema(std::move(name), std::move(description), defaults), make_family_variant,
          family_parameter_count, /*decays: none*/ {}, /*fused: per call, kernel supports()*/ true};
}

int64_t family_parameter_count(const VariantContext& ctx) {
  const config::ParamMap& p = ctx.attention.params;
  const int64_t h = ctx.n_head, c = ctx.d_model;
  int64_t n = 0;
  if (parse_position(config::param<std::string>(p, "position")).distance_bias) {
    n += h * config::param<int64_t>(p, "bias_window");
  }
  if (config::param<std::string>(p, "normalizer") == "elastic") {
    n += config::param<std::string>(p, "tau_form") == "per_token" ? (c + 1) * h : h;
  }
  return n;
}

FamilyAttentionImpl::FamilyAttentionImpl(const VariantContext& ctx)
    : backend_(ctx.attention.backend), variant_(ctx.attention.variant) {
  // attention.backend was checked by make_variant, the only way this module is built.
  const int64_t H = ctx.n_head;
  position_ = parse_position(param<std::string>(ctx, "position"));
  if (position_.rope) rope_theta_ = param<double>(ctx, "rope_theta");
  if (position_.alibi) {
    alibi_slopes_ = torch::tensor(alibi_slopes(H), torch::kFloat64);
  }
  if (position_.distance_bias) {
    // float32 master copy, init 0 (the authors' Triton examples; docs/paper.md 1.2).
    distance_bias_ = register_parameter(
        "distance_bias", torch::zeros({H, param<int64_t>(ctx, "bias_window")}, torch::kFloat32));
  }
  if (param<std::string>(ctx, "normalizer") == "elastic") {
    normalizer_ = kernels::Normalizer::Elastic;
    tau_form_ = parse_tau_form(param<std::string>(ctx, "tau_form"));
    renormalize_ = param<bool>(ctx, "renormalize");
    const double tau_init = param<double>(ctx, "tau_init");
    if (tau_form_ == TauForm::PerToken) {
      tau_proj_ = register_module("tau_proj", torch::nn::Linear(ctx.d_model, H));
      torch::NoGradGuard no_grad;
      tau_proj_->weight.zero_();
      tau_proj_->bias.fill_(tau_init);
      tau_over_len_ = param<std::string>(ctx, "tau_scale") == "inv_len";
    } else {
      tau_ = register_parameter("tau", torch::full({H}, tau_init, torch::kFloat32));
      tau_over_len_ = tau_form_ == TauForm::PerHeadOverLen;
    }
  }
}

kernels::FamilySpec FamilyAttentionImpl::spec(const torch::Tensor& x, const torch::Device& device) {
  kernels::FamilySpec s;
  if (alibi_slopes_.defined()) {
    if (alibi_slopes_.device() != device) alibi_slopes_ = alibi_slopes_.to(device);
    s.alibi_slopes = alibi_slopes_;
  }
  s.distance_bias = distance_bias_;
  s.normalizer = normalizer_;
  switch (normalizer_) {  // no default: -Wswitch lists this site when a normaliser is added
    case kernels::Normalizer::Softmax:
      break;
    case kernels::Normalizer::Elastic:
      s.tau = tau_form_ == TauForm::PerToken ? tau_proj_->forward(x) : tau_;  // [B, T, H] or [H]
      s.tau_over_len = tau_over_len_;
      s.renormalize = renormalize_;
      break;
  }
  return s;
}

torch::Tensor FamilyAttentionImpl::forward(const torch::Tensor& q, const torch::Tensor& k,
                                           const torch::Tensor& v, const torch::Tensor& x,
                                           torch::Tensor* weights) {
  torch::Tensor qr = q, kr = k;
  if (position_.rope) {
    qr = apply_rope(q, rope_theta_);
    kr = apply_rope(k, rope_theta_);
  }
  const kernels::FamilySpec s = spec(x, q.device());
  const kernels::FusedKernel* fused =
      choose_fused_kernel(backend_, variant_, qr, kr, v, s, weights != nullptr);
  if (fused) return fused->forward(qr, kr, v, s);
  return eager_family_attention(qr, kr, v, s, weights);
}

std::vector<LearnedStatistic> FamilyAttentionImpl::learned(const torch::Tensor& x) {
  using Kind = LearnedStatistic::Kind;
  std::vector<LearnedStatistic> out;
  if (tau_proj_) {
    out.push_back({"tau_offset_mean", "mean per-token offset g_h(x)", Kind::TokenMean,
                   tau_proj_->forward(x)});  // [B, T, H]
  } else if (tau_.defined()) {
    out.push_back({"tau", "learned tau_h", Kind::PerHead, tau_});
  }
  if (distance_bias_.defined()) {
    // Distances r < min(W, T): a window of T tokens shows no larger one.
    const int64_t r = std::min(distance_bias_.size(1), x.size(1));
    out.push_back({"distance_bias", "distance bias b[h, r]", Kind::Profile,
                   distance_bias_.narrow(1, 0, r)});
  }
  return out;
}

std::shared_ptr<AttentionVariantImpl> make_family_variant(const VariantContext& ctx) {
  return std::make_shared<FamilyAttentionImpl>(ctx);
}

const kernels::FusedKernel* choose_fused_kernel(const std::string& backend,
                                                const std::string& variant,
                                                const std::string& device,
                                                const kernels::FusedKernel* kernel,
                                                const std::string& unsupported,
                                                bool weights_requested,
                                                const std::string& unvalidated) {
  config::check_backend(backend);
  if (weights_requested || backend == "eager") return nullptr;
  if (kernel && unsupported.empty()) {
    return backend == "auto" && !unvalidated.empty() ? nullptr : kernel;  // "fused" opts in
  }
  if (backend == "auto") return nullptr;
  // "fused", and no kernel serves this call: refuse rather than run something else.
  const std::string fix = "; use backend = \"auto\" (fused where supported, else eager) or "
                          "\"eager\"";
  if (!unsupported.empty()) {
    throw UsageError("attention.backend = \"fused\" but attention variant '" + variant +
                     "' cannot run fused on device " + device + ": " + unsupported + fix);
  }
  throw UsageError("attention.backend = \"fused\" but no fused attention kernel is registered "
                   "for device " + device + " (attention variant '" + variant + "')" + fix);
}

const kernels::FusedKernel* choose_fused_kernel(const std::string& backend,
                                                const std::string& variant, const torch::Tensor& q,
                                                const torch::Tensor& k, const torch::Tensor& v,
                                                const kernels::FamilySpec& spec,
                                                bool weights_requested,
                                                const Registry<kernels::FusedKernel>& registry) {
  const std::string device = c10::DeviceTypeName(q.device().type(), /*lower_case=*/true);
  const kernels::FusedKernel* kernel = registry.find(device);
  const bool ask = kernel && !weights_requested && backend != "eager";
  const std::string unsupported = ask ? kernel->unsupported(q, k, v, spec) : "";
  const std::string unvalidated =
      ask && unsupported.empty() && kernel->unvalidated ? kernel->unvalidated(q, k, v, spec) : "";
  return choose_fused_kernel(backend, variant, device, kernel, unsupported, weights_requested,
                             unvalidated);
}

}  // namespace attnbench::variants
