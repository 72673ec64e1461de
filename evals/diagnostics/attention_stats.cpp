#include "evals/diagnostics/attention_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace attnbench::evals::diagnostics {

namespace {
constexpr double kNonzeroThreshold = 1e-6;  // the Lazy authors' test threshold (docs/paper.md 6)
}  // namespace

LayerStatsAccumulator::LayerStatsAccumulator(int64_t n_head, int64_t fixed_position)
    : n_head_(n_head), fixed_position_(fixed_position) {
  auto zeros = [&] { return torch::zeros({n_head}, torch::kFloat64); };
  sink_ = zeros();
  fixed_ = zeros();
  zeros_ = zeros();
  nonzeros_ = zeros();
  mass_sum_ = zeros();
  entropy_sum_ = zeros();
  nonzero_rows_ = zeros();
  mass_min_ = torch::full({n_head}, std::numeric_limits<double>::infinity(), torch::kFloat64);
  mass_max_ = torch::full({n_head}, -std::numeric_limits<double>::infinity(), torch::kFloat64);
}

void LayerStatsAccumulator::add(const torch::Tensor& weights) {
  if (weights.dim() != 4 || weights.size(1) != n_head_ || weights.size(2) != weights.size(3)) {
    throw std::invalid_argument("attention weights must be [B, " + std::to_string(n_head_) +
                                ", T, T]; got " + std::to_string(weights.dim()) + " dimensions");
  }
  torch::NoGradGuard no_grad;
  const int64_t B = weights.size(0), T = weights.size(2);
  const torch::Tensor causal =
      torch::ones({T, T}, torch::kBool).tril().to(weights.device());
  // Only the causal triangle counts: whatever sits above the diagonal is not a weight.
  const torch::Tensor a = weights.to(torch::kFloat64).masked_fill(causal.logical_not(), 0.0).cpu();
  const torch::Tensor tri = causal.cpu();

  // Sink mass: the mean over every query row; a row whose sliding window no longer reaches the
  // first token (imported Mistral and Qwen2 models) gives it 0.
  sink_ += a.select(3, 0).sum(torch::IntArrayRef{0, 2});
  // Mask@k: rows i >= k see position k; earlier rows cannot attend to it and are not averaged.
  if (fixed_position_ >= 0 && fixed_position_ < T) {
    fixed_ += a.select(3, fixed_position_)
                  .narrow(2, fixed_position_, T - fixed_position_)
                  .sum(torch::IntArrayRef{0, 2});
    fixed_rows_ += B * (T - fixed_position_);
  }
  // Sparsity: exact zeros among the causal entries (docs/paper.md 6: "exactly 0").
  zeros_ += a.eq(0.0).logical_and(tri).sum(torch::IntArrayRef{0, 2, 3}).to(torch::kFloat64);
  causal_entries_ += B * T * (T + 1) / 2;
  // Non-zero ratio as the Lazy authors' tests compute it, (a > 1e-6).mean(): a tiny positive weight
  // counts as zero and the denominator is every T x T entry, the masked future included (whose
  // weights are 0 in their tensors, as in `a` here).
  nonzeros_ += a.gt(kNonzeroThreshold).sum(torch::IntArrayRef{0, 2, 3}).to(torch::kFloat64);
  all_entries_ += B * T * T;

  // Row mass: the signed sum, which variants without a sum-to-one normaliser put anywhere (below 1
  // for softpick, softmax1 or a sink logit, any value for sigmoid, possibly <= 0 for differential).
  const torch::Tensor mass = a.sum(3);  // [B, H, T]
  mass_sum_ += mass.sum(torch::IntArrayRef{0, 2});
  const torch::Tensor per_head = mass.transpose(0, 1).reshape({n_head_, B * T});
  mass_min_ = torch::minimum(mass_min_, std::get<0>(per_head.min(1)));
  mass_max_ = torch::maximum(mass_max_, std::get<0>(per_head.max(1)));

  // Entropy of the row's magnitudes |a_ij| / sum_j |a_ij| (0 log 0 = 0; docs/diagnostics.md): the
  // row's distribution when its weights are non-negative, and still a distribution (finite) when a
  // variant's weights can be negative (differential attention), whose signed row sum may be <= 0.
  // Rows whose weights are all exactly 0 have none and are excluded; `ne` keeps a NaN row in, so a
  // non-finite weight shows as a NaN entropy, never as a zero row.
  const torch::Tensor magnitude = a.abs();
  const torch::Tensor abs_mass = magnitude.sum(3);
  const torch::Tensor alive = abs_mass.ne(0.0);
  const torch::Tensor q =
      magnitude / torch::where(alive, abs_mass, torch::ones_like(abs_mass)).unsqueeze(-1);
  const torch::Tensor h = -torch::xlogy(q, q).sum(3);
  entropy_sum_ += torch::where(alive, h, torch::zeros_like(h)).sum(torch::IntArrayRef{0, 2});
  nonzero_rows_ += alive.sum(torch::IntArrayRef{0, 2}).to(torch::kFloat64);
  rows_ += B * T;
}

std::vector<HeadStats> LayerStatsAccumulator::finish() const {
  if (rows_ == 0) throw std::logic_error("LayerStatsAccumulator::finish: no weights were added");
  std::vector<HeadStats> out(n_head_);
  auto at = [](const torch::Tensor& t, int64_t h) { return t[h].item<double>(); };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int64_t h = 0; h < n_head_; ++h) {
    HeadStats& s = out[h];
    const double rows = static_cast<double>(rows_);
    s.rows = rows_;
    s.sink_mass = at(sink_, h) / rows;
    s.fixed_token_mass = fixed_rows_ > 0 ? at(fixed_, h) / static_cast<double>(fixed_rows_) : nan;
    s.sparsity = at(zeros_, h) / static_cast<double>(causal_entries_);
    s.nonzero_ratio = at(nonzeros_, h) / static_cast<double>(all_entries_);
    s.row_mass_mean = at(mass_sum_, h) / rows;
    s.row_mass_min = at(mass_min_, h);
    s.row_mass_max = at(mass_max_, h);
    const double alive = at(nonzero_rows_, h);
    s.entropy = alive > 0 ? at(entropy_sum_, h) / alive : nan;
    s.zero_rows = (rows - alive) / rows;
  }
  return out;
}

std::vector<HeadStats> head_stats(const torch::Tensor& weights, int64_t fixed_position) {
  LayerStatsAccumulator acc(weights.size(1), fixed_position);
  acc.add(weights);
  return acc.finish();
}

HeadStats mean_over_heads(const std::vector<HeadStats>& heads) {
  if (heads.empty()) throw std::logic_error("mean_over_heads: no heads");
  HeadStats m;
  m.row_mass_min = std::numeric_limits<double>::infinity();
  m.row_mass_max = -std::numeric_limits<double>::infinity();
  // Entropy is NaN for a head whose every row is zero: average over the heads that have it.
  int64_t with_entropy = 0;
  for (const auto& h : heads) {
    m.sink_mass += h.sink_mass;
    m.fixed_token_mass += h.fixed_token_mass;
    m.sparsity += h.sparsity;
    m.nonzero_ratio += h.nonzero_ratio;
    m.row_mass_mean += h.row_mass_mean;
    m.row_mass_min = std::min(m.row_mass_min, h.row_mass_min);
    m.row_mass_max = std::max(m.row_mass_max, h.row_mass_max);
    if (!std::isnan(h.entropy)) {
      m.entropy += h.entropy;
      ++with_entropy;
    }
    m.zero_rows += h.zero_rows;
    m.rows += h.rows;
  }
  const double n = static_cast<double>(heads.size());
  m.sink_mass /= n;
  m.fixed_token_mass /= n;
  m.sparsity /= n;
  m.nonzero_ratio /= n;
  m.row_mass_mean /= n;
  m.entropy = with_entropy > 0 ? m.entropy / static_cast<double>(with_entropy)
                               : std::numeric_limits<double>::quiet_NaN();
  m.zero_rows /= n;
  return m;
}

double sink_rate(const std::vector<HeadStats>& heads, double threshold) {
  if (heads.empty()) throw std::logic_error("sink_rate: no heads");
  const auto above = std::count_if(heads.begin(), heads.end(),
                                   [&](const HeadStats& h) { return h.sink_mass > threshold; });
  return static_cast<double>(above) / static_cast<double>(heads.size());
}

}  // namespace attnbench::evals::diagnostics
