#include "variants/family.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/common/error.h"
#include "kernels/family_tables.h"
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

// Initial values of the learned attention parameters: an offset, a logit or a scale of order 1;
// 100 is far beyond any (1e300 ended in a raw LibTorch error).
constexpr std::pair<double, double> kInitBound{-100.0, 100.0};

ParamSpec number(std::string name, ValueType type, config::Value def, std::optional<double> min,
                 std::optional<double> max, std::string doc) {
  ParamSpec p;
  p.name = std::move(name);
  p.type = type;
  p.default_value = std::move(def);
  p.min = min;
  p.max = max;
  p.doc = std::move(doc);
  return p;
}

void add_normalizer_params(std::vector<ParamSpec>& ps, const FamilyDefaults& d) {
  const std::pair<std::string, std::vector<std::string>> elastic{"normalizer", {"elastic"}};
  ps.push_back(choice("normalizer", d.normalizer, {"softmax", "elastic"},
                      "softmax, or Elastic-Softmax a = ReLU(p + t) with p the causal softmax"));
  ps.push_back(choice("tau_form", d.tau_form, tau_forms(),
                      "elastic offset t: tau_h / n_i (per_head_over_len), g_h(x_i) / n_i with g "
                      "linear (per_token), or tau_h (per_head_const); n_i = i + 1 visible keys"));
  ps.back().applies_if = {elastic};
  ps.push_back(number("tau_init", ValueType::Float, d.tau_init, kInitBound.first, kInitBound.second,
                      "initial tau (per-token: initial bias of g, weights 0); -1 keeps only "
                      "weights above the uniform share 1/n_i"));
  ps.back().applies_if = {elastic};
  ps.push_back(choice("tau_scale", d.tau_scale, tau_scales(),
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
}

// The sink cures that fit the family (docs/variants.md, "Sink cures").
void add_cure_params(std::vector<ParamSpec>& ps, const FamilyDefaults& d) {
  ps.push_back(choice("sink", d.sink, {"none", "zero", "learned"},
                      "a logit S_h with no value in the softmax's denominator: none, S = 0 "
                      "(softmax1, off-by-one) or learned per head (gpt-oss sinks)"));
  ps.back().applies_if = {{"normalizer", {"softmax"}}};
  ps.back().neutral = std::string("none");
  ps.push_back(number("sink_init", ValueType::Float, d.sink_init, kInitBound.first, kInitBound.second,
                      "initial learned sink logit S_h"));
  ps.back().applies_if = {{"normalizer", {"softmax"}}, {"sink", {"learned"}}};
  ps.push_back(choice("score_scale", d.score_scale, {"none", "ssmax"},
                      "scores times c_h log n_i (SSMax, Nakanishi 2025), c_h learned per head"));
  ps.back().neutral = std::string("none");
  ps.push_back(number("ssmax_init", ValueType::Float, d.ssmax_init, kInitBound.first, kInitBound.second,
                      "initial SSMax scale c_h"));
  ps.back().applies_if = {{"score_scale", {"ssmax"}}};
  ParamSpec forget;
  forget.name = "forget_gate";
  forget.type = ValueType::Bool;
  forget.default_value = d.forget_gate;
  forget.doc = "forgetting gate (FoX): s_ij += sum_{l=j+1..i} log f_l, f_t = sigmoid(w_h . x_t + "
               "b_h)";
  forget.neutral = false;
  ps.push_back(std::move(forget));
  ps.push_back(choice("output_gate", d.output_gate, {"none", "headwise", "elementwise"},
                      "output times sigmoid(x W_g) (gated attention G1): one gate per head "
                      "(headwise) or per output element (elementwise)"));
  ps.back().neutral = std::string("none");
}

// The cure options are left out of the resolved config when switched off (ParamSpec::neutral).
std::string option(const VariantContext& ctx, const std::string& key) {
  return config::param_or<std::string>(ctx.attention.params, key, "none");
}
bool forget_gate(const VariantContext& ctx) {
  return config::param_or<bool>(ctx.attention.params, "forget_gate", false);
}

bool is_elastic(const VariantContext& ctx) {
  return param<std::string>(ctx, "normalizer") == "elastic";
}

// The family member as configured starts as softmax attention with RoPE exactly when its other
// parts start neutral: a distance bias starts at 0, and the elastic offset at tau_init = 0 gives
// ReLU(p + 0) = p, whose rows already sum to 1. Every other part changes the output at
// initialisation. A learned sink cannot start absent: its share e^S / (e^S + sum_j e^s_j) is > 0
// for every finite S, and at S = -inf its gradient (that share times the output) is 0, so the
// sink would never learn.
std::string family_pretrained_start(const config::AttentionConfig& a) {
  auto shown = [&](const std::string& key) {
    return "attention." + key + " = " + config::to_string(a.params.at(key));
  };
  const std::string position = a.get_string("position");
  if (position != "rope" && position != "rope+distance_bias") {
    return shown("position") + " replaces RoPE, the positions the model was trained with";
  }
  if (a.get_string("normalizer") == "elastic" && a.get_float("tau_init") != 0.0) {
    return shown("tau_init") + ": Elastic-Softmax starts as softmax only at tau_init = 0";
  }
  const std::string sink = config::param_or<std::string>(a.params, "sink", "none");
  if (sink == "zero") return shown("sink") + " adds 1 to every softmax denominator";
  if (sink == "learned") {
    return shown("sink") + ": no sink logit starts absent (a finite one takes a share of every "
                           "row; one at -inf has gradient 0 and never learns)";
  }
  if (a.has("score_scale") && a.get_string("score_scale") != "none") {
    return shown("score_scale") + " rescales every score by c_h log n_i";
  }
  if (a.has("forget_gate") && a.get_bool("forget_gate")) {
    return shown("forget_gate") + " adds log-gates of a randomly initialised projection";
  }
  if (a.has("output_gate") && a.get_string("output_gate") != "none") {
    return shown("output_gate") + " multiplies the output by sigmoid(x W_g), W_g random";
  }
  return "";
}

}  // namespace

config::VariantSchema family_schema(std::string name, std::string description,
                                    const FamilyDefaults& d) {
  std::vector<ParamSpec> ps = position_params(d.position);
  add_normalizer_params(ps, d);
  add_cure_params(ps, d);
  config::VariantSchema s;
  s.name = std::move(name);
  s.description = std::move(description);
  s.params = std::move(ps);
  s.checks = {check_rope};
  // A fused kernel decides per call whether it serves the layer (its supports check).
  s.kernels = "CPU: cpu-tiled, every option; CUDA: SDPA for the softmax forms without a sink logit "
              "or forgetting gate, attnbench's kernels for Elastic-Softmax (opt-in: backend = "
              "fused)";
  return s;
}

VariantRegistration family_registration(std::string name, std::string description,
                                        const FamilyDefaults& defaults) {
  VariantRegistration r;
  r.schema = family_schema(std::move(name), std::move(description), defaults);
  r.factory = make_family_variant;
  r.parameter_count = family_parameter_count;
  r.decays = [](const std::string& param, const torch::Tensor&) {
    return param == "forget_proj.weight" || param == "gate_proj.weight";
  };
  r.pretrained_start = family_pretrained_start;
  return r;
}

int64_t family_parameter_count(const VariantContext& ctx) {
  const int64_t h = ctx.n_head, c = ctx.d_model;
  int64_t n = position_parameter_count(ctx);
  if (is_elastic(ctx)) n += param<std::string>(ctx, "tau_form") == "per_token" ? (c + 1) * h : h;
  if (option(ctx, "sink") == "learned") n += h;
  if (option(ctx, "score_scale") == "ssmax") n += h;
  if (forget_gate(ctx)) n += (c + 1) * h;
  const std::string gate = option(ctx, "output_gate");
  if (gate != "none") n += c * h * (gate == "headwise" ? 1 : ctx.head_dim);
  return n;
}

FamilyAttentionImpl::FamilyAttentionImpl(const VariantContext& ctx)
    : backend_(ctx.attention.backend),
      variant_(ctx.attention.variant),
      n_head_(ctx.n_head),
      head_dim_(ctx.head_dim),
      position_(*this, ctx) {
  // attention.backend was checked by make_variant, the only way this module is built.
  init_normalizer(ctx);
  init_cures(ctx);
}

void FamilyAttentionImpl::init_normalizer(const VariantContext& ctx) {
  if (!is_elastic(ctx)) return;
  normalizer_ = kernels::Normalizer::Elastic;
  tau_form_ = parse_tau_form(param<std::string>(ctx, "tau_form"));
  renormalize_ = param<bool>(ctx, "renormalize");
  const double tau_init = param<double>(ctx, "tau_init");
  if (tau_form_ == TauForm::PerToken) {
    tau_proj_ = register_module("tau_proj", torch::nn::Linear(ctx.d_model, ctx.n_head));
    torch::NoGradGuard no_grad;
    tau_proj_->weight.zero_();
    tau_proj_->bias.fill_(tau_init);
    tau_over_len_ = param<std::string>(ctx, "tau_scale") == "inv_len";
  } else {
    tau_ = register_parameter("tau", torch::full({ctx.n_head}, tau_init, torch::kFloat32));
    tau_over_len_ = tau_form_ == TauForm::PerHeadOverLen;
  }
}

void FamilyAttentionImpl::init_cures(const VariantContext& ctx) {
  const int64_t H = ctx.n_head, C = ctx.d_model;
  const std::string sink = option(ctx, "sink");
  if (sink == "learned") {
    sink_learned_ = true;
    sink_logit_ = register_parameter(
        "sink_logit", torch::full({H}, param<double>(ctx, "sink_init"), torch::kFloat32));
  } else if (sink == "zero") {
    sink_logit_ = torch::zeros({H}, torch::kFloat32);  // softmax1: a constant, not a parameter
  }
  if (option(ctx, "score_scale") == "ssmax") {
    ssmax_scale_ = register_parameter(
        "ssmax_scale", torch::full({H}, param<double>(ctx, "ssmax_init"), torch::kFloat32));
  }
  if (forget_gate(ctx)) {
    forget_proj_ = register_module("forget_proj", torch::nn::Linear(C, H));
  }
  const std::string gate = option(ctx, "output_gate");
  if (gate != "none") {
    headwise_gate_ = gate == "headwise";
    const int64_t out = headwise_gate_ ? H : H * ctx.head_dim;
    gate_proj_ = register_module(
        "gate_proj", torch::nn::Linear(torch::nn::LinearOptions(C, out).bias(false)));
    torch::NoGradGuard no_grad;
    gate_proj_->weight.normal_(0.0, ctx.init_std);  // as the q projection it extends (Qiu et al.)
  }
}

kernels::FamilySpec FamilyAttentionImpl::spec(const torch::Tensor& x, const torch::Device& device,
                                              int64_t first) {
  kernels::FamilySpec s;
  position_.describe(s, device);
  s.normalizer = normalizer_;
  switch (normalizer_) {  // no default: -Wswitch lists this site when a normaliser is added
    case kernels::Normalizer::Softmax:
      break;
    case kernels::Normalizer::Elastic:
      s.tau = tau_form_ == TauForm::PerToken  // [B, Tq, H] or [H]
                  ? tau_proj_->forward(x.narrow(1, first, x.size(1) - first))
                  : tau_;
      s.tau_over_len = tau_over_len_;
      s.renormalize = renormalize_;
      break;
  }
  if (forget_proj_) {
    // C_t = sum_{l<=t} log f_l in float32 at least: a long cumulative sum in 16 bits loses the
    // differences C_i - C_j the scores need.
    const auto dtype = torch::promote_types(x.scalar_type(), torch::kFloat32);
    const auto log_f = torch::log_sigmoid(forget_proj_->forward(x).to(dtype));  // [B, T, H]
    s.log_forget_cumsum = log_f.cumsum(1).permute({0, 2, 1});                   // [B, H, T]
  }
  if (sink_logit_.defined()) {
    if (!sink_learned_ && sink_logit_.device() != device) sink_logit_ = sink_logit_.to(device);
    s.sink_logit = sink_logit_;
  }
  return s;
}

torch::Tensor FamilyAttentionImpl::scale_scores(const torch::Tensor& q, int64_t first) const {
  if (!ssmax_scale_.defined()) return q;
  // SSMax multiplies row i's scores by c_h log n_i; the paper implements it by scaling the query
  // vector, so an additive position bias is added unscaled (docs/variants.md, "Sink cures").
  const int64_t H = q.size(1), T = q.size(2);
  const auto dtype = torch::promote_types(q.scalar_type(), torch::kFloat32);
  const auto opts = torch::TensorOptions().dtype(dtype).device(q.device());
  const auto log_n = torch::log(kernels::visible_keys(T, opts, first)).view({1, 1, T, 1});
  return q * (ssmax_scale_.to(dtype).view({1, H, 1, 1}) * log_n).to(q.scalar_type());
}

torch::Tensor FamilyAttentionImpl::output_gate(const torch::Tensor& x, int64_t Tq) {
  if (!gate_proj_) return {};
  const int64_t B = x.size(0);
  // [B, Tq, H] or [B, Tq, H*D]
  const auto g = torch::sigmoid(gate_proj_->forward(x.narrow(1, x.size(1) - Tq, Tq)));
  return headwise_gate_ ? g.permute({0, 2, 1}).unsqueeze(-1)
                        : g.view({B, Tq, n_head_, head_dim_}).transpose(1, 2);
}

torch::Tensor FamilyAttentionImpl::forward(const torch::Tensor& q, const torch::Tensor& k,
                                           const torch::Tensor& v, const torch::Tensor& x,
                                           torch::Tensor* weights) {
  const int64_t Tq = q.size(2), first = k.size(2) - Tq;  // queries at positions first..T-1
  const torch::Tensor qr = scale_scores(position_.rotate(q, first), first);
  const torch::Tensor kr = position_.rotate(k);
  const kernels::FamilySpec s = spec(x, q.device(), first);
  const kernels::FusedKernel* fused =
      choose_fused_kernel(backend_, variant_, qr, kr, v, s, weights != nullptr);
  torch::Tensor out = fused ? fused->forward(qr, kr, v, s)
                            : eager_family_attention(qr, kr, v, s, weights);
  const torch::Tensor gate = output_gate(x, Tq);
  return gate.defined() ? out * gate.to(out.scalar_type()) : out;
}

torch::Tensor FamilyAttentionImpl::output_from_weights(const torch::Tensor& weights,
                                                       const torch::Tensor& v,
                                                       const torch::Tensor& x) {
  const torch::Tensor out = AttentionVariantImpl::output_from_weights(weights, v, x);
  const torch::Tensor gate = output_gate(x, weights.size(2));
  return gate.defined() ? out * gate.to(out.scalar_type()) : out;
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
  position_.learned(x, out);
  if (ssmax_scale_.defined())
    out.push_back({"ssmax_scale", "SSMax scale c_h", Kind::PerHead, ssmax_scale_});
  if (sink_learned_)
    out.push_back({"sink_logit", "learned sink logit S_h", Kind::PerHead, sink_logit_});
  if (forget_proj_) {
    out.push_back({"forget_gate_mean", "mean forget gate f_t", Kind::TokenMean,
                   torch::sigmoid(forget_proj_->forward(x))});  // [B, T, H]
  }
  if (gate_proj_) {  // [B, H, T, 1 or D] -> the mean gate of each head per token [B, T, H]
    out.push_back({"output_gate_mean", "mean output gate sigmoid(x W_g)", Kind::TokenMean,
                   output_gate(x, x.size(1)).mean(-1).permute({0, 2, 1})});
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
                                                bool eager_needed,
                                                const std::string& unvalidated) {
  config::check_backend(backend);
  if (eager_needed || backend == "eager") return nullptr;
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
  // Weights need the eager path; so does an incremental step (fewer queries than keys) unless the
  // kernel takes queries at an offset.
  const bool incremental = q.size(2) != k.size(2);
  const bool eager_needed = weights_requested || (incremental && !(kernel && kernel->query_offset));
  const bool ask = kernel && !eager_needed && backend != "eager";
  const std::string unsupported = ask ? kernel->unsupported(q, k, v, spec) : "";
  const std::string unvalidated =
      ask && unsupported.empty() && kernel->unvalidated ? kernel->unvalidated(q, k, v, spec) : "";
  return choose_fused_kernel(backend, variant, device, kernel, unsupported, eager_needed,
                             unvalidated);
}

}  // namespace attnbench::variants
