#include "variants/position.h"

#include <cmath>
#include <stdexcept>

namespace attnbench::variants {

const std::vector<std::string> kPositionOptions = {"none", "rope", "alibi", "distance_bias",
                                                   "rope+distance_bias"};

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

torch::Tensor apply_rope(const torch::Tensor& x, double theta) {
  const int64_t T = x.size(2), D = x.size(3);
  TORCH_CHECK(D % 2 == 0, "RoPE needs an even head dimension, got ", D);
  auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(x.device());
  // inv_freq_d = theta^(-2d/D), d = 0..D/2-1; angle[t, d] = t * inv_freq_d.
  auto inv_freq = torch::pow(theta, -torch::arange(0, D / 2, f64) * 2.0 / static_cast<double>(D));
  auto angle = torch::outer(torch::arange(T, f64), inv_freq);
  auto cos = torch::cos(angle).to(x.scalar_type());  // [T, D/2]
  auto sin = torch::sin(angle).to(x.scalar_type());
  auto x1 = x.narrow(-1, 0, D / 2), x2 = x.narrow(-1, D / 2, D / 2);
  return torch::cat({x1 * cos - x2 * sin, x2 * cos + x1 * sin}, -1);
}

std::optional<config::ConfigProblem> check_rope_head_dim(const config::ModelConfig& model,
                                                         const config::AttentionConfig& attention) {
  const std::string position = config::param_or<std::string>(attention.params, "position", "");
  if (position.find("rope") == std::string::npos || model.head_dim() % 2 == 0) return std::nullopt;
  return config::ConfigProblem{
      "model.n_head", "RoPE needs an even head dimension; model.d_model / model.n_head = " +
                          std::to_string(model.head_dim())};
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
  for (size_t k = 0; static_cast<int64_t>(slopes.size()) < n_head; k += 2) slopes.push_back(extra[k]);
  return slopes;
}

}  // namespace attnbench::variants
