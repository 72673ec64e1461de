#include "variants/position.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace attnbench::variants {

const std::vector<std::string>& position_options() {
  static const std::vector<std::string> options = {"none", "rope", "alibi", "distance_bias",
                                                   "rope+distance_bias"};
  return options;
}

PositionParts parse_position(const std::string& position) {
  PositionParts parts;
  if (position == "none") return parts;
  if (position == "rope") {
    parts.rope = true;
  } else if (position == "alibi") {
    parts.alibi = true;
  } else if (position == "distance_bias") {
    parts.distance_bias = true;
  } else if (position == "rope+distance_bias") {
    parts.rope = true;
    parts.distance_bias = true;
  } else {
    throw std::invalid_argument("unknown attention position '" + position + "'");
  }
  return parts;
}

torch::Tensor apply_rope(const torch::Tensor& x, const RopeFrequencies& frequencies,
                         int64_t first) {
  const int64_t T = x.size(2), D = x.size(3);
  TORCH_CHECK(D % 2 == 0, "RoPE needs an even head dimension, got ", D);
  auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(x.device());
  // angle[t, d] = t * inv_freq_d, d = 0..D/2-1.
  auto inv_freq = rope_inverse_frequencies(frequencies, D, torch::kFloat64).to(x.device());
  auto angle = torch::outer(torch::arange(first, first + T, f64), inv_freq);
  auto cos = torch::cos(angle).to(x.scalar_type());  // [T, D/2]
  auto sin = torch::sin(angle).to(x.scalar_type());
  auto x1 = x.narrow(-1, 0, D / 2), x2 = x.narrow(-1, D / 2, D / 2);
  return torch::cat({x1 * cos - x2 * sin, x2 * cos + x1 * sin}, -1);
}

RopeFrequencies rope_frequencies(const config::ParamMap& p) {
  RopeFrequencies f;
  f.theta = config::param<double>(p, "rope_theta");
  f.scaling = parse_rope_scaling(config::param_or<std::string>(p, "rope_scaling", "none"));
  if (f.scaling == RopeScaling::None) return f;
  f.factor = config::param<double>(p, "rope_scaling_factor");
  if (f.scaling == RopeScaling::Llama3) {
    f.low_freq_factor = config::param<double>(p, "rope_low_freq_factor");
    f.high_freq_factor = config::param<double>(p, "rope_high_freq_factor");
    f.original_context = config::param<double>(p, "rope_original_max_position_embeddings");
  }
  return f;
}

std::optional<config::ConfigProblem> check_rope(const config::ModelConfig& model,
                                                const config::AttentionConfig& attention) {
  const std::string position = config::param_or<std::string>(attention.params, "position", "");
  if (position.find("rope") == std::string::npos) return std::nullopt;
  if (model.head_dim() % 2 != 0) {
    return config::ConfigProblem{
        "model.n_head", "RoPE needs an even head dimension; model.d_model / model.n_head = " +
                            std::to_string(model.head_dim())};
  }
  const RopeFrequencies f = rope_frequencies(attention.params);
  if (f.scaling == RopeScaling::Llama3 && !(f.high_freq_factor > f.low_freq_factor)) {
    return config::ConfigProblem{
        "attention.rope_high_freq_factor",
        "Llama 3's RoPE scaling interpolates between the two bands, so rope_high_freq_factor = " +
            std::to_string(f.high_freq_factor) + " must exceed rope_low_freq_factor = " +
            std::to_string(f.low_freq_factor)};
  }
  return std::nullopt;
}

namespace {

config::ParamSpec float_param(const std::string& name, double value, double min, double max,
                              const std::string& doc) {
  config::ParamSpec p;
  p.name = name;
  p.type = config::ValueType::Float;
  p.default_value = value;
  p.min = min;
  p.max = max;
  p.doc = doc;
  return p;
}

// rope_scaling and its parameters (variants/rope.h), at Llama 3.1's values; "none" is neutral, so
// they leave the ids of runs without scaling unchanged.
std::vector<config::ParamSpec> rope_scaling_params() {
  config::ParamSpec scaling;
  scaling.name = "rope_scaling";
  scaling.type = config::ValueType::String;
  scaling.default_value = std::string("none");
  scaling.neutral = std::string("none");
  scaling.allowed = rope_scaling_names();
  scaling.doc = "RoPE frequency scaling as transformers' rope_type: none, linear (positions / "
                "factor) or llama3 (Llama 3.1's per-band rule); set by model.init_from";
  const std::vector<std::string> rope = {"rope", "rope+distance_bias"};
  scaling.applies_if = {{"position", rope}};
  config::ParamSpec factor = float_param("rope_scaling_factor", 8.0, 1.0, 1e6,
                                         "RoPE scaling factor (transformers' factor)");
  factor.applies_if = {{"position", rope}, {"rope_scaling", {"linear", "llama3"}}};
  std::vector<config::ParamSpec> out = {scaling, factor};
  for (config::ParamSpec p :
       {float_param("rope_low_freq_factor", 1.0, 1e-6, 1e6, "llama3: low_freq_factor"),
        float_param("rope_high_freq_factor", 4.0, 1e-6, 1e6, "llama3: high_freq_factor"),
        float_param(
            "rope_original_max_position_embeddings", 8192.0, 1.0, 1e12,
            "llama3: original_max_position_embeddings, the context of the unscaled model")}) {
    p.applies_if = {{"position", rope}, {"rope_scaling", {"llama3"}}};
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

std::vector<config::ParamSpec> position_params(const PositionDefaults& d,
                                               const std::vector<std::string>& allowed) {
  config::ParamSpec position;
  position.name = "position";
  position.type = config::ValueType::String;
  position.default_value = d.position;
  position.allowed = allowed;
  position.doc = "positional part of the scores: rotary q/k (rope), additive ALiBi slopes, a "
                 "learnable per-head distance bias b[h, i-j], or RoPE plus that bias";
  config::ParamSpec theta;
  theta.name = "rope_theta";
  theta.type = config::ValueType::Float;
  theta.default_value = d.rope_theta;
  theta.min = 1.0;
  theta.max = 1e12;  // Llama 3 uses 5e5, Qwen 1e6; within float32 with room
  theta.doc = "RoPE base: dimension pair d rotates at pos * theta^(-2d/D)";
  theta.applies_if = {{"position", {"rope", "rope+distance_bias"}}};
  config::ParamSpec window;
  window.name = "bias_window";
  window.type = config::ValueType::Int;
  window.default_value = d.bias_window;
  window.min = 1.0;
  window.doc = "W: distances i-j < W get a learned bias b[h, i-j] (init 0, float32), distances "
               ">= W get none";
  window.applies_if = {{"position", {"distance_bias", "rope+distance_bias"}}};
  // Each parameter applies under the allowed positions that have its part; one that applies under
  // none of them is left out (sigmoid allows rope | none: no bias_window).
  std::vector<config::ParamSpec> parts = {theta, window};
  for (config::ParamSpec& p : rope_scaling_params()) parts.push_back(std::move(p));
  std::vector<config::ParamSpec> out = {position};
  for (config::ParamSpec p : parts) {
    std::vector<std::string>& when = p.applies_if.front().second;
    when.erase(std::remove_if(when.begin(), when.end(),
                              [&](const std::string& w) {
                                return std::find(allowed.begin(), allowed.end(), w) ==
                                       allowed.end();
                              }),
               when.end());
    if (!when.empty()) out.push_back(std::move(p));
  }
  return out;
}

int64_t position_parameter_count(const VariantContext& ctx) {
  const config::ParamMap& p = ctx.attention.params;
  if (!parse_position(config::param<std::string>(p, "position")).distance_bias) return 0;
  return ctx.n_head * config::param<int64_t>(p, "bias_window");
}

PositionScores::PositionScores(torch::nn::Module& owner, const VariantContext& ctx)
    : parts_(parse_position(config::param<std::string>(ctx.attention.params, "position"))) {
  const config::ParamMap& p = ctx.attention.params;
  if (parts_.rope) rope_ = rope_frequencies(p);
  if (parts_.alibi) alibi_slopes_ = torch::tensor(alibi_slopes(ctx.n_head), torch::kFloat64);
  if (parts_.distance_bias) {
    // float32 master copy, init 0 (the authors' Triton examples; docs/paper.md 1.2).
    distance_bias_ = owner.register_parameter(
        "distance_bias",
        torch::zeros({ctx.n_head, config::param<int64_t>(p, "bias_window")}, torch::kFloat32));
  }
}

torch::Tensor PositionScores::rotate(const torch::Tensor& x, int64_t first) const {
  return parts_.rope ? apply_rope(x, rope_, first) : x;
}

void PositionScores::describe(kernels::FamilySpec& spec, const torch::Device& device) {
  if (alibi_slopes_.defined()) {
    if (alibi_slopes_.device() != device) alibi_slopes_ = alibi_slopes_.to(device);
    spec.alibi_slopes = alibi_slopes_;
  }
  spec.distance_bias = distance_bias_;
}

void PositionScores::learned(const torch::Tensor& x, std::vector<LearnedStatistic>& out) const {
  if (!distance_bias_.defined()) return;
  const int64_t r = std::min(distance_bias_.size(1), x.size(1));
  out.push_back({"distance_bias", "distance bias b[h, r]", LearnedStatistic::Kind::Profile,
                 distance_bias_.narrow(1, 0, r)});
}

namespace {
// The power-of-two schedule: 2^(-8k/n), k = 1..n.
std::vector<double> power_of_two_slopes(int64_t n) {
  std::vector<double> s;
  for (int64_t k = 1; k <= n; ++k) s.push_back(std::pow(2.0, -8.0 * k / static_cast<double>(n)));
  return s;
}
}  // namespace

std::vector<double> alibi_slopes(int64_t n_head) {
  if (n_head < 1) throw std::invalid_argument("ALiBi needs at least one head");
  int64_t closest = 1;
  while (closest * 2 <= n_head) closest *= 2;
  std::vector<double> slopes = power_of_two_slopes(closest);
  if (closest == n_head) return slopes;
  std::vector<double> extra = power_of_two_slopes(2 * closest);
  for (size_t k = 0; static_cast<int64_t>(slopes.size()) < n_head; k += 2)
    slopes.push_back(extra[k]);
  return slopes;
}

}  // namespace attnbench::variants
