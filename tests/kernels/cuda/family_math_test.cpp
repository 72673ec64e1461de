// The per-element math the fused CUDA kernels share (kernels/cuda/family_math.cuh), compiled for
// the CPU, against straightforward double-precision formulas on random values: the score bias, the
// Elastic threshold, p, the ReLU mask and weight (with the threshold edge cases), the online
// log-sum-exp, the renormalisation factor, the backward's per-row delta and dt (against the sums
// over the row they replace, and dS and dt against central differences), and the dead-row bound.
#include "kernels/cuda/family_math.cuh"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "tests/test_seeds.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace family_math_test {

namespace {
namespace gpu = attnbench::kernels::gpu;

// The next draw's seed: fixed in CI, fresh in a soak (tests/test_seeds.h). CTest runs each case in
// a process of its own, so a case's draws do not depend on the cases before it.
uint64_t next_seed() {
  static attnbench::testing::Seeds seeds("family_math");
  return seeds.next();
}

double rel(double got, double want, double scale) {
  return std::abs(got - want) / std::max({std::abs(want), scale, 1e-300});
}

// log sum exp(s) in long double, shifted by the max.
long double direct_lse(const std::vector<double>& s, size_t begin, size_t end) {
  long double m = -INFINITY, sum = 0;
  for (size_t j = begin; j < end; ++j) m = std::max<long double>(m, s[j]);
  for (size_t j = begin; j < end; ++j) sum += std::exp(static_cast<long double>(s[j]) - m);
  return m + std::log(sum);
}

template <typename T>
gpu::OnlineLse<T> tiled_lse(const std::vector<double>& s, size_t begin, size_t end,
                            std::mt19937_64& rng) {
  gpu::OnlineLse<T> st;
  for (size_t j0 = begin; j0 < end;) {
    const size_t nk = std::min<size_t>(1 + rng() % 70, end - j0);
    T mx = -static_cast<T>(INFINITY);
    for (size_t j = j0; j < j0 + nk; ++j) mx = std::max(mx, static_cast<T>(s[j]));
    st.rescale(mx);
    for (size_t j = j0; j < j0 + nk; ++j) st.add(static_cast<T>(s[j]));
    j0 += nk;
  }
  return st;
}

// One row of the family in double: keys 0 .. n - 1 all visible, scores s, threshold t.
struct Row {
  std::vector<double> s, v, dout;  // s [n], v [n, D], dout [D]
  double t = 0;
  int64_t D = 0;
  bool elastic = true, renormalize = false;
};

struct RowForward {
  double lse = 0, rowsum = 0, kept = 0;
  std::vector<double> p, a, out, kept_v;  // out: the saved (normalised) output
};

RowForward row_forward(const Row& row) {
  const size_t n = row.s.size();
  RowForward f;
  double m = -INFINITY, sum = 0;
  for (double x : row.s) m = std::max(m, x);
  for (double x : row.s) sum += std::exp(x - m);
  f.lse = m + std::log(sum);
  f.out.assign(row.D, 0), f.kept_v.assign(row.D, 0);
  for (size_t j = 0; j < n; ++j) {
    const double p = std::exp(row.s[j] - f.lse), a = row.elastic ? std::max(p + row.t, 0.0) : p;
    const bool m_j = !row.elastic || p + row.t > 0;
    f.p.push_back(p), f.a.push_back(a);
    f.rowsum += a, f.kept += m_j;
    for (int64_t d = 0; d < row.D; ++d) {
      f.out[d] += a * row.v[j * row.D + d];
      if (m_j) f.kept_v[d] += row.v[j * row.D + d];
    }
  }
  const double u = !row.renormalize ? 1.0 : (f.rowsum > 0 ? 1 / f.rowsum : 0.0);
  for (auto& x : f.out) x *= u;
  return f;
}

double row_loss(const Row& row) {
  const auto f = row_forward(row);
  double l = 0;
  for (int64_t d = 0; d < row.D; ++d) l += row.dout[d] * f.out[d];
  return l;
}

double dot(const double* a, const double* b, int64_t n) {
  double s = 0;
  for (int64_t d = 0; d < n; ++d) s += a[d] * b[d];
  return s;
}

// sum_d |a_d b_d|: the scale of the rounding of a . b.
double abs_dot(const double* a, const double* b, int64_t n) {
  double s = 0;
  for (int64_t d = 0; d < n; ++d) s += std::abs(a[d] * b[d]);
  return s;
}

}  // namespace

// One test case per group (each CTest case is a process of its own, about a second to start).
CATCH_TEST_CASE(
    "the forward's per-element math: bias, threshold, p, mask, log-sum-exp, renormalisation") {
  CATCH_SECTION("the score bias: ALiBi, distance bias, both, none") {
    const uint64_t seed = next_seed();
    CATCH_INFO(attnbench::testing::describe(seed));
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> uni(0, 1);
    std::normal_distribution<double> normal;
    const int64_t H = 3;
    for (int trial = 0; trial < 20; ++trial) {
      const int64_t W = 1 + static_cast<int64_t>(uni(rng) * 40);
      std::vector<double> slopes(H), table(H * W);
      for (auto& x : slopes) x = uni(rng) * 0.5;
      for (auto& x : table) x = normal(rng);
      std::vector<float> slopes_f(slopes.begin(), slopes.end()),
          table_f(table.begin(), table.end());
      for (int64_t h = 0; h < H; ++h)
        for (int64_t d = -3; d < W + 5; ++d) {  // negative: a masked key above the diagonal
          const double alibi = -slopes[h] * static_cast<double>(d);
          const double learned = d >= 0 && d < W ? table[h * W + d] : 0.0;
          CATCH_CHECK(gpu::alibi_bias(slopes[h], d) == alibi);
          CATCH_CHECK(gpu::distance_bias_at(table.data() + h * W, W, d) == learned);
          CATCH_CHECK(gpu::score_bias<double>(nullptr, nullptr, W, h, d) == 0.0);
          CATCH_CHECK(gpu::score_bias<double>(slopes.data(), nullptr, W, h, d) == alibi);
          CATCH_CHECK(gpu::score_bias<double>(nullptr, table.data(), W, h, d) == learned);
          CATCH_CHECK(gpu::score_bias(slopes.data(), table.data(), W, h, d) == alibi + learned);
          const float f = gpu::score_bias(slopes_f.data(), table_f.data(), W, h, d);
          CATCH_CHECK(rel(f, alibi + learned, 1.0) < 1e-5);
        }
      const double qk = normal(rng) * 8, scale = 1 / std::sqrt(64.0), b = normal(rng);
      CATCH_CHECK(gpu::score(qk, scale, b) == qk * scale + b);  // the bias is not scaled
    }
  }

  CATCH_SECTION("the Elastic threshold: tau per head or per token, over n_i or not") {
    const uint64_t seed = next_seed();
    CATCH_INFO(attnbench::testing::describe(seed));
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal;
    const int64_t B = 2, T = 9, H = 3;
    std::vector<double> per_head(H), per_token(B * T * H);
    for (auto& x : per_head) x = normal(rng);
    for (auto& x : per_token) x = normal(rng);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < T; ++i) {
          CATCH_CHECK(gpu::tau_at(per_head.data(), false, b, h, i, T, H) == per_head[h]);
          const double tok = per_token[(b * T + i) * H + h];  // [B, T, H]
          CATCH_CHECK(gpu::tau_at(per_token.data(), true, b, h, i, T, H) == tok);
          CATCH_CHECK(gpu::visible_keys(i) == i + 1);
          CATCH_CHECK(gpu::elastic_threshold(tok, i, true) == tok / static_cast<double>(i + 1));
          CATCH_CHECK(gpu::elastic_threshold(tok, i, false) == tok);
          CATCH_CHECK(gpu::tau_grad(tok, i, true) == tok / static_cast<double>(i + 1));
          CATCH_CHECK(gpu::tau_grad(tok, i, false) == tok);
          const float tf = gpu::elastic_threshold(static_cast<float>(tok), i, true);
          CATCH_CHECK(tf == static_cast<float>(tok) / static_cast<float>(i + 1));  // IEEE quotient
        }
  }

  CATCH_SECTION("p, the ReLU mask and the weight, with the threshold's edge cases") {
    const uint64_t seed = next_seed();
    CATCH_INFO(attnbench::testing::describe(seed));
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> uni(-1, 1);
    for (int trial = 0; trial < 20000; ++trial) {
      const double lse = 10 * uni(rng), s = lse + 12 * (uni(rng) - 0.5);
      const double p = gpu::softmax_prob(s, lse);
      CATCH_CHECK(p == std::exp(s - lse));
      // float: exp of the fp32 difference, within a few ulp of the exact value for the same inputs
      const float sf = static_cast<float>(s), lf = static_cast<float>(lse);
      const float pf = gpu::softmax_prob(sf, lf);
      const double want = std::exp(static_cast<double>(sf) - static_cast<double>(lf));
      CATCH_CHECK(std::abs(pf - want) <=
                  want * 6e-7 * (1 + std::abs(static_cast<double>(sf) - lf)));
      const double t = uni(rng) * 0.2;
      const bool keep = p + t > 0;
      CATCH_CHECK(gpu::elastic_keep(p, t) == keep);
      CATCH_CHECK(gpu::elastic_weight(p, t) == (keep ? p + t : 0.0));
      // The fp32 decision is exactly the sign of the exact sum of the fp32 p and t.
      const float tf = static_cast<float>(t);
      CATCH_CHECK(gpu::elastic_keep(pf, tf) == (static_cast<double>(pf) + tf > 0));
    }
    // p + t exactly 0: not kept (ReLU's derivative taken as 0) and a +0 weight.
    for (double p : {0.25, 0.5, 1.0 / 1024, 0.0}) {
      CATCH_CHECK_FALSE(gpu::elastic_keep(p, -p));
      CATCH_CHECK(gpu::elastic_weight(p, -p) == 0.0);
      CATCH_CHECK_FALSE(std::signbit(gpu::elastic_weight(p, -p)));
      CATCH_CHECK_FALSE(gpu::elastic_keep(static_cast<float>(p), -static_cast<float>(p)));
    }
    // t >= 0: every p > 0 is kept with weight p + t; p = 0 (an underflowed exp) is kept when t > 0,
    // which is why the causal mask is re-applied after the offset.
    CATCH_CHECK(gpu::elastic_keep(1e-300, 0.0));
    CATCH_CHECK(gpu::elastic_weight(0.3, 0.0) == 0.3);
    CATCH_CHECK(gpu::elastic_weight(0.3, 0.1) == 0.3 + 0.1);
    CATCH_CHECK_FALSE(gpu::elastic_keep(0.0, 0.0));
    CATCH_CHECK(gpu::elastic_keep(0.0, 0.01));
    CATCH_CHECK(gpu::elastic_weight(0.0, 0.01) == 0.01);
    // t < -1: nothing survives.
    CATCH_CHECK(gpu::elastic_weight(1.0, -1.5) == 0.0);
  }

  CATCH_SECTION("the online log-sum-exp over tiles equals the direct sum, without overflow") {
    const uint64_t seed = next_seed();
    CATCH_INFO(attnbench::testing::describe(seed));
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal;
    double worst64 = 0, worst32 = 0;
    for (int trial = 0; trial < 300; ++trial) {
      const size_t n = 1 + rng() % 400;
      const double spread = trial % 3 == 0 ? 300.0 : 3.0;  // 300: exp(s) alone overflows
      const double shift = trial % 2 ? 500.0 : -20.0;
      std::vector<double> s(n);
      for (auto& x : s) x = shift + spread * normal(rng);
      const long double want = direct_lse(s, 0, n);
      const auto st64 = tiled_lse<double>(s, 0, n, rng);
      const auto st32 = tiled_lse<float>(s, 0, n, rng);
      CATCH_REQUIRE(std::isfinite(st64.lse()));
      CATCH_REQUIRE(std::isfinite(st32.lse()));
      worst64 = std::max(worst64,
                         static_cast<double>(std::abs(st64.lse() - want) / (1 + std::abs(want))));
      worst32 = std::max(worst32,
                         static_cast<double>(std::abs(st32.lse() - want) / (1 + std::abs(want))));
      // Two parts of the row reduced apart (two lanes), then merged.
      const size_t cut = rng() % (n + 1);
      auto a = tiled_lse<double>(s, 0, cut, rng);
      const auto b = tiled_lse<double>(s, cut, n, rng);
      a.merge(b);
      CATCH_CHECK(std::abs(a.lse() - want) / (1 + std::abs(want)) < 1e-14);
    }
    CATCH_CHECK(worst64 < 1e-14);
    CATCH_CHECK(worst32 < 1e-6);
    // The empty state: lse of one score is the score; merging an empty state changes nothing.
    gpu::OnlineLse<double> one, empty;
    one.rescale(3.5);
    one.add(3.5);
    CATCH_CHECK(one.lse() == 3.5);
    one.merge(empty);
    CATCH_CHECK(one.lse() == 3.5);
    empty.merge(one);
    CATCH_CHECK(empty.lse() == 3.5);
  }

  CATCH_SECTION("the renormalisation factor") {
    CATCH_CHECK(gpu::renorm_factor(0.25, true) == 4.0);
    CATCH_CHECK(gpu::renorm_factor(0.0, true) == 0.0);  // an all-zero row outputs 0
    CATCH_CHECK(gpu::renorm_factor(0.0, false) == 1.0);
    CATCH_CHECK(gpu::renorm_factor(7.0, false) == 1.0);
    CATCH_CHECK(gpu::renorm_offset(2.5, true) == 2.5);
    CATCH_CHECK(gpu::renorm_offset(2.5, false) == 0.0);
    CATCH_CHECK(gpu::weight_grad(3.0, 1.0, 0.5) == 1.0);
  }
}

CATCH_TEST_CASE("delta and dt from N and n equal the row sums they replace, and are the gradient") {
  const uint64_t seed = next_seed();
  CATCH_INFO(attnbench::testing::describe(seed));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uni(0, 1);
  double worst_sum = 0, worst_fd = 0;
  int zero_rows = 0, compared = 0;
  for (int trial = 0; trial < 600; ++trial) {
    Row row;
    const size_t n = 1 + rng() % 40;
    row.D = 1 + static_cast<int64_t>(rng() % 6);
    row.elastic = trial % 5 != 0;
    row.renormalize = (trial / 5) % 2 == 1;
    for (size_t j = 0; j < n; ++j) row.s.push_back(1.5 * normal(rng));
    for (size_t x = 0; x < n * row.D; ++x) row.v.push_back(normal(rng));
    for (int64_t d = 0; d < row.D; ++d) row.dout.push_back(normal(rng));
    // Offsets of every kind: around -1/n, small constants of both signs, 0, and all-dead rows.
    switch (trial % 4) {
      case 0:
        row.t = (uni(rng) * 1.8 - 1.5) / static_cast<double>(n);
        break;
      case 1:
        row.t = uni(rng) * 0.3 - 0.2;
        break;
      case 2:
        row.t = trial % 8 == 2 ? 0.0 : 0.05 * uni(rng);
        break;
      default:
        row.t = -1.5;
        break;  // p <= 1 < 1.5: every weight is 0
    }
    if (!row.elastic) row.t = 0;
    const auto f = row_forward(row);
    // Away from the kink and from tiny renormalised sums, so that differences are meaningful.
    bool ill = false;
    for (double p : f.p) ill |= row.elastic && std::abs(p + row.t) < 1e-4;
    // (central differences need a smooth neighbourhood: with renormalisation the k-th derivative
    // grows like rowsum^-k)
    if (row.renormalize && f.rowsum > 0 && f.rowsum < 0.05) ill = true;
    if (ill) continue;
    ++compared;

    // The row sums of the CPU kernel (kernels/cpu/family_backward.cpp).
    const double u = !row.renormalize ? 1.0 : (f.rowsum > 0 ? 1 / f.rowsum : 0.0);
    const double c = row.renormalize ? dot(row.dout.data(), f.out.data(), row.D) : 0.0;
    double delta_sum = 0, dt_sum = 0, scale = 0;
    std::vector<double> dA(n);
    for (size_t j = 0; j < n; ++j) {
      const bool m_j = !row.elastic || f.p[j] + row.t > 0;
      dA[j] = (dot(row.dout.data(), row.v.data() + j * row.D, row.D) - c) * u;
      if (m_j) delta_sum += f.p[j] * dA[j], dt_sum += dA[j], scale += std::abs(dA[j]);
    }
    const double dout_dot_out = dot(row.dout.data(), f.out.data(), row.D);
    const auto rg = row.elastic ? gpu::elastic_row_grad(
                                      dout_dot_out, dot(row.dout.data(), f.kept_v.data(), row.D),
                                      f.rowsum, f.kept, row.t, row.renormalize)
                                : gpu::softmax_row_grad(dout_dot_out, row.renormalize);
    CATCH_INFO("trial=" << trial << " n=" << n << " t=" << row.t << " elastic=" << row.elastic
                        << " renormalize=" << row.renormalize << " rowsum=" << f.rowsum);
    // Relative to the size of the terms that cancel (a row with one kept key under
    // renormalisation has delta = dt = 0 exactly, and both sides return rounding noise).
    scale += abs_dot(row.dout.data(), f.out.data(), row.D) +
             u * (abs_dot(row.dout.data(), f.kept_v.data(), row.D) + std::abs(c) * f.kept);
    const double e =
        std::max(rel(rg.delta, delta_sum, scale), row.elastic ? rel(rg.dt, dt_sum, scale) : 0.0);
    CATCH_CHECK(e < 1e-13);
    worst_sum = std::max(worst_sum, e);
    if (f.rowsum == 0) {
      ++zero_rows;
      CATCH_CHECK(rg.delta == 0.0);
      CATCH_CHECK(rg.dt == 0.0);
      for (double o : f.out) CATCH_CHECK(o == 0.0);
    }

    // Central differences (five-point: truncation O(h^4), rounding eps |l| / h) of l = dO . o
    // in s_j and in t.
    const double h = 2e-5;
    auto derivative = [h](auto&& loss_at) {
      return (-loss_at(2 * h) + 8 * loss_at(h) - 8 * loss_at(-h) + loss_at(-2 * h)) / (12 * h);
    };
    double fd_scale = 1e-3;
    std::vector<double> ds(n), ds_fd(n);
    for (size_t j = 0; j < n; ++j) {
      const bool keep = !row.elastic || gpu::elastic_keep(f.p[j], row.t);
      ds[j] = gpu::score_grad(
          f.p[j], keep,
          gpu::weight_grad(dot(row.dout.data(), row.v.data() + j * row.D, row.D), c, u), rg.delta);
      ds_fd[j] = derivative([&](double x) {
        Row moved = row;
        moved.s[j] += x;
        return row_loss(moved);
      });
      fd_scale = std::max(fd_scale, std::abs(ds_fd[j]));
    }
    double e_fd = 0;
    for (size_t j = 0; j < n; ++j) e_fd = std::max(e_fd, std::abs(ds[j] - ds_fd[j]) / fd_scale);
    if (row.elastic) {
      const double dt_fd = derivative([&](double x) {
        Row moved = row;
        moved.t += x;
        return row_loss(moved);
      });
      e_fd = std::max(e_fd, std::abs(rg.dt - dt_fd) / std::max(std::abs(dt_fd), 1e-3));
    }
    CATCH_CHECK(e_fd < 1e-6);
    worst_fd = std::max(worst_fd, e_fd);
  }
  CATCH_CHECK(compared > 300);
  CATCH_CHECK(zero_rows > 20);
  std::printf(
      "family_math: delta, dt vs row sums max rel error %.2e, dS, dt vs central differences "
      "%.2e (%d rows, %d all-zero)\n",
      worst_sum, worst_fd, compared, zero_rows);
}

CATCH_TEST_CASE("the dead-row bound never calls a kept weight dead") {
  const uint64_t seed = next_seed();
  CATCH_INFO(attnbench::testing::describe(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uni(0, 1);
  int64_t dead32 = 0, dead64 = 0, n = 0;
  for (int trial = 0; trial < 200000; ++trial, ++n) {
    const double lse = -5 + 30 * uni(rng);
    const double t = -std::exp(-10 * uni(rng));  // (-1, -4.5e-5): n_i up to 22,000
    // Scores within 1e-3 of the exact boundary lse + log(-t) (the float margin is up to ~3e-4
    // here), and some exactly on it.
    const double boundary = lse + std::log(-t);
    const double s = trial % 10 == 0 ? boundary : boundary + (uni(rng) - 0.5) * 2e-3;
    {
      const float sf = static_cast<float>(s), lf = static_cast<float>(lse),
                  tf = static_cast<float>(t);
      if (gpu::row_dead(sf, gpu::dead_score_bound(lf, tf))) {
        ++dead32;
        CATCH_CHECK_FALSE(gpu::elastic_keep(gpu::softmax_prob(sf, lf), tf));
      }
    }
    if (gpu::row_dead(s, gpu::dead_score_bound(lse, t))) {
      ++dead64;
      CATCH_CHECK_FALSE(gpu::elastic_keep(gpu::softmax_prob(s, lse), t));
    }
  }
  CATCH_CHECK(dead32 > n / 5);  // the test exercises both sides of the bound
  CATCH_CHECK(dead64 > n / 5);
  // Clearly below the bound: dead; clearly above: live; t >= 0: never dead (except a row that sees
  // no key of the tile, max score -inf, which contributes nothing).
  CATCH_CHECK(gpu::row_dead(std::log(0.01) - 1e-6, gpu::dead_score_bound(0.0, -0.01)));
  CATCH_CHECK_FALSE(gpu::row_dead(std::log(0.01) + 1e-9, gpu::dead_score_bound(0.0, -0.01)));
  CATCH_CHECK_FALSE(gpu::row_dead(-700.0, gpu::dead_score_bound(0.0, 0.0)));
  CATCH_CHECK_FALSE(gpu::row_dead(-700.0, gpu::dead_score_bound(0.0, 1e-3)));
  CATCH_CHECK(gpu::row_dead(-static_cast<double>(INFINITY), gpu::dead_score_bound(0.0, 1e-3)));
  CATCH_CHECK(gpu::row_dead(-static_cast<double>(INFINITY), gpu::dead_score_bound(0.0, -0.5)));
}

}  // namespace family_math_test
