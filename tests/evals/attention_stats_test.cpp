// Attention statistics (evals/diagnostics/attention_stats.h) on hand-built weights of the sink
// cures, whose rows need not sum to 1 (softpick, softmax1, a sink logit, key-value bias: below 1;
// sigmoid: any value) and may hold negative entries (differential attention: softmax1 - lambda
// softmax2). Every statistic must be finite and match the definitions of docs/diagnostics.md.
#include <torch/torch.h>

#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "evals/diagnostics/attention_stats.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace attention_stats_test {

using namespace attnbench::evals::diagnostics;
using Catch::Detail::Approx;

namespace {

// One head's [1, 1, T, T] weights from its causal rows (entries above the diagonal hold 7: they
// are not weights and must be ignored).
torch::Tensor one_head(const std::vector<std::vector<double>>& rows) {
  const int64_t T = static_cast<int64_t>(rows.size());
  torch::Tensor w = torch::full({1, 1, T, T}, 7.0, torch::kFloat64);
  for (int64_t i = 0; i < T; ++i) {
    for (int64_t j = 0; j <= i; ++j) w[0][0][i][j] = rows[i][j];
  }
  return w;
}

// H(p) in nats of non-negative numbers that sum to 1 (0 ln 0 = 0).
double entropy_of(const std::vector<double>& p) {
  double h = 0;
  for (double x : p) h -= x > 0 ? x * std::log(x) : 0.0;
  return h;
}

bool all_finite(const HeadStats& s) {
  for (double v : {s.sink_mass, s.sparsity, s.row_mass_mean, s.row_mass_min, s.row_mass_max,
                   s.entropy, s.zero_rows}) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

}  // namespace

CATCH_TEST_CASE("attention stats: rows that sum to less than 1 (softpick, softmax1, sink logit)") {
  // Softpick-like rows: exact zeros where ReLU(e^x - 1) is 0, mass below 1 where the sink absorbs.
  const auto s = head_stats(one_head({{0.5}, {0.25, 0.0}, {0.0, 0.3, 0.3}, {0.0, 0.0, 0.0, 0.0}}));
  CATCH_REQUIRE(s.size() == 1);
  CATCH_CHECK(all_finite(s[0]));
  CATCH_CHECK(s[0].sink_mass == Approx((0.5 + 0.25 + 0 + 0) / 4));
  CATCH_CHECK(s[0].sparsity == Approx(6.0 / 10.0));  // 6 exact zeros among 10 causal entries
  CATCH_CHECK(s[0].row_mass_mean == Approx((0.5 + 0.25 + 0.6 + 0) / 4));
  CATCH_CHECK(s[0].row_mass_min == 0);
  CATCH_CHECK(s[0].row_mass_max == Approx(0.6));
  CATCH_CHECK(s[0].zero_rows == Approx(0.25));
  // Rows normalised to their mass: [1], [1 0], [0 .5 .5]; the zero row has no distribution.
  CATCH_CHECK(s[0].entropy == Approx(std::log(2.0) / 3));
}

CATCH_TEST_CASE("attention stats: sigmoid rows summing to more than 1") {
  const auto s = head_stats(one_head({{0.9}, {0.8, 0.6}, {0.7, 0.7, 0.7}}));
  CATCH_CHECK(all_finite(s[0]));
  CATCH_CHECK(s[0].sink_mass == Approx((0.9 + 0.8 + 0.7) / 3));
  CATCH_CHECK(s[0].sparsity == 0);
  CATCH_CHECK(s[0].row_mass_mean == Approx((0.9 + 1.4 + 2.1) / 3));
  CATCH_CHECK(s[0].row_mass_min == Approx(0.9));
  CATCH_CHECK(s[0].row_mass_max == Approx(2.1));
  CATCH_CHECK(s[0].zero_rows == 0);
  CATCH_CHECK(s[0].entropy == Approx((0 + entropy_of({4 / 7.0, 3 / 7.0}) + std::log(3.0)) / 3));
}

CATCH_TEST_CASE("attention stats: negative weights (differential attention) keep every statistic finite") {
  // Row 1 sums to 1 with a negative entry, row 2 to 0 without being a zero row, row 3 to -0.5.
  const auto s = head_stats(one_head({{1.0}, {-0.25, 1.25}, {0.5, -0.5, 0.0}, {-0.5, 0.0, 0.0, 0.0}}));
  CATCH_REQUIRE(all_finite(s[0]));
  CATCH_CHECK(s[0].sink_mass == Approx((1.0 - 0.25 + 0.5 - 0.5) / 4));  // signed
  CATCH_CHECK(s[0].sparsity == Approx(4.0 / 10.0));  // exact zeros only; negatives are not zeros
  CATCH_CHECK(s[0].row_mass_mean == Approx((1.0 + 1.0 + 0.0 - 0.5) / 4));
  CATCH_CHECK(s[0].row_mass_min == Approx(-0.5));
  CATCH_CHECK(s[0].row_mass_max == Approx(1.0));
  // A row summing to 0 is not a zero row: it has weights, only they cancel.
  CATCH_CHECK(s[0].zero_rows == 0);
  // Entropy of |a_i| / sum_j |a_ij|: [1] -> 0, [1/6 5/6], [1/2 1/2 0] -> ln 2, [1 0 0 0] -> 0.
  CATCH_CHECK(s[0].entropy == Approx((entropy_of({1 / 6.0, 5 / 6.0}) + std::log(2.0)) / 4));

  const HeadStats m = mean_over_heads({s[0], s[0]});
  CATCH_CHECK(all_finite(m));
  CATCH_CHECK(m.row_mass_min == Approx(-0.5));
  CATCH_CHECK(sink_rate(s, 0.1) == 1);
  CATCH_CHECK(sink_rate(s, 0.2) == 0);
}

CATCH_TEST_CASE("attention stats: a negative zero counts as zero, non-negative rows are unchanged") {
  // -0.0 is an exact zero (ReLU and masking may produce it); entropy of non-negative rows is the
  // row-normalised one, as before negative weights were allowed.
  const auto s = head_stats(one_head({{1.0}, {-0.0, 0.5}, {0.25, 0.0, 0.75}}));
  CATCH_CHECK(s[0].sparsity == Approx(2.0 / 6.0));
  CATCH_CHECK(s[0].zero_rows == 0);
  CATCH_CHECK(s[0].entropy == Approx(entropy_of({0.25, 0.75}) / 3));
}

CATCH_TEST_CASE("attention stats: a non-finite weight shows as NaN, never as a zero row") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto s = head_stats(one_head({{1.0}, {nan, 0.5}}));
  CATCH_CHECK(std::isnan(s[0].sink_mass));
  CATCH_CHECK(std::isnan(s[0].row_mass_mean));
  CATCH_CHECK(std::isnan(s[0].entropy));
  CATCH_CHECK(s[0].zero_rows == 0);          // the NaN row has a weight that is not 0
  CATCH_CHECK(s[0].sparsity == 0);           // NaN is not an exact zero
}

}  // namespace attention_stats_test
