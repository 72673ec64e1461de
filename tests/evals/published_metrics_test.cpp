// The published metrics of docs/diagnostics.md ("Published metrics") on hand-built weights and
// hidden states with known answers: Gu et al.'s Sink_k and alpha_k, the first-token mass's uniform
// baseline, the Lazy authors' non-zero ratio, Sun et al.'s massive activations, kurtosis, and the
// collapse measures (mean pairwise cosine, effective rank); and their rows in the store.
#include <torch/torch.h>

#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "core/config/run_config.h"
#include "evals/diagnostics/attention_stats.h"
#include "evals/diagnostics/hidden_state_stats.h"
#include "evals/diagnostics/model_diagnostics.h"
#include "evals/diagnostics/sink_k.h"
#include "model/decoder.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace published_metrics_test {

using namespace attnbench;
using namespace attnbench::evals::diagnostics;
using Catch::Detail::Approx;

namespace {

// [B, H, T, T] weights, every causal row all on key 0; above the diagonal 5 (not weights).
torch::Tensor all_on_first(int64_t B, int64_t H, int64_t T) {
  torch::Tensor w = torch::zeros({B, H, T, T}, torch::kFloat64);
  w.select(3, 0).fill_(1.0);
  return w.masked_fill(torch::ones({T, T}, torch::kBool).triu(1), 5.0);
}

// Uniform causal rows a_ij = 1 / (i + 1).
torch::Tensor uniform(int64_t B, int64_t H, int64_t T) {
  const torch::Tensor n = torch::arange(1, T + 1, torch::kFloat64).reciprocal().unsqueeze(1);
  return n.expand({T, T}).tril().expand({B, H, T, T}).clone();
}

double harmonic(int64_t n) {
  double h = 0;
  for (int64_t i = 1; i <= n; ++i) h += 1.0 / static_cast<double>(i);
  return h;
}

}  // namespace

CATCH_TEST_CASE("sink_k: all attention on the first token gives Sink_1 = 1, Sink_k>1 = 0") {
  const torch::Tensor w = all_on_first(2, 3, 64);
  const torch::Tensor alpha = importance_scores(w, 10);
  CATCH_REQUIRE(alpha.sizes() == torch::IntArrayRef({2, 3, 10}));
  CATCH_CHECK(alpha.select(2, 0).eq(1.0).all().item<bool>());
  CATCH_CHECK(alpha.narrow(2, 1, 9).eq(0.0).all().item<bool>());  // the 5s above the diagonal ignored
  SinkKAccumulator acc(2, 10, 0.3);
  acc.add(0, w);
  acc.add(1, w);
  const SinkK s = acc.finish();
  CATCH_CHECK(s.window == 64);
  CATCH_CHECK(s.windows == 2);
  CATCH_CHECK(s.sink[0] == 1);
  CATCH_CHECK(s.layer_sink[1][0] == 1);
  for (int64_t k = 2; k <= 10; ++k) CATCH_CHECK(s.sink[k - 1] == 0);
}

CATCH_TEST_CASE("sink_k: uniform attention gives alpha_k = mean over i >= k-1 of 1/n_i, no sink") {
  const int64_t T = 64;
  const SinkK s = [&] {
    SinkKAccumulator acc(1, 10, 0.3);
    acc.add(0, uniform(3, 2, T));
    return acc.finish();
  }();
  for (int64_t k = 1; k <= 10; ++k) {
    const double expected = (harmonic(T) - harmonic(k - 1)) / static_cast<double>(T - k + 1);
    CATCH_CHECK(s.alpha[k - 1] == Approx(expected).epsilon(1e-12));
    CATCH_CHECK(s.alpha_uniform[k - 1] == Approx(expected).epsilon(1e-12));
    CATCH_CHECK(s.sink[k - 1] == 0);  // alpha_1 = H_64 / 64 = 0.074 < 0.3
  }
  // The first-token mass of uniform rows is the same mean: its baseline.
  CATCH_CHECK(uniform_alpha(T, 1) == Approx(head_stats(uniform(1, 1, T))[0].sink_mass).epsilon(1e-12));
}

CATCH_TEST_CASE("sink_k: the threshold applies per window, before averaging (as compute_attention_sink)") {
  // Window 0 sinks fully, window 1 is uniform: the mean alpha_1 = (1 + 0.074) / 2 = 0.54 exceeds
  // 0.3, yet only one of the two (window, head) pairs has alpha_1 > 0.3.
  const torch::Tensor w = torch::cat({all_on_first(1, 1, 64), uniform(1, 1, 64)}, 0);
  SinkKAccumulator acc(1, 10, 0.3);
  acc.add(0, w);
  const SinkK s = acc.finish();
  CATCH_CHECK(s.alpha[0] > 0.3);
  CATCH_CHECK(s.sink[0] == 0.5);
  // Raw weights: a row keeping half its mass on key 0 (softpick-like) gives alpha_1 = 0.5, not 1.
  CATCH_CHECK(importance_scores(all_on_first(1, 1, 8) * 0.5, 1).item<double>() == 0.5);
  // A NaN weight shows, never counts as "no sink".
  torch::Tensor bad = uniform(1, 1, 8);
  bad[0][0][3][0] = std::numeric_limits<double>::quiet_NaN();
  SinkKAccumulator nan_acc(1, 2, 0.3);
  nan_acc.add(0, bad);
  CATCH_CHECK(std::isnan(nan_acc.finish().sink[0]));
  CATCH_CHECK_THROWS(importance_scores(bad, 9));
  CATCH_CHECK_THROWS(SinkKAccumulator(2, 2, 0.3).finish());
}

CATCH_TEST_CASE("nonzero ratio: (a > 1e-6) over all T x T entries, beside exact-zero sparsity") {
  // Rows [1], [1e-7 0.5], [0 0.2 0.3]: 4 entries above 1e-6 among 9; 1 exact zero among 6 causal.
  torch::Tensor w = torch::zeros({1, 1, 3, 3}, torch::kFloat64);
  w[0][0][0][0] = 1.0;
  w[0][0][1][0] = 1e-7;
  w[0][0][1][1] = 0.5;
  w[0][0][2][1] = 0.2;
  w[0][0][2][2] = 0.3;
  w[0][0][0][2] = 0.9;  // above the diagonal: not a weight
  const auto s = head_stats(w);
  CATCH_CHECK(s[0].nonzero_ratio == Approx(4.0 / 9.0));
  CATCH_CHECK(s[0].sparsity == Approx(1.0 / 6.0));  // 1e-7 is no exact zero
  // Uniform softmax rows: every causal entry is non-zero, (T + 1) / 2T of all entries.
  CATCH_CHECK(head_stats(uniform(1, 1, 8))[0].nonzero_ratio == Approx(9.0 / 16.0));
  CATCH_CHECK(mean_over_heads({s[0], head_stats(uniform(1, 1, 8))[0]}).nonzero_ratio ==
              Approx((4.0 / 9.0 + 9.0 / 16.0) / 2));
}

CATCH_TEST_CASE("massive activations: one entry 1e4 among N(0,1) entries counts one") {
  torch::manual_seed(7);
  torch::Tensor h = torch::randn({1, 64, 32}, torch::kFloat64);
  h[0][5][3] = 1e4;
  const HiddenStats s = hidden_stats(h);
  CATCH_CHECK(s.massive_activations == 1);
  CATCH_CHECK(s.top_activation[0] == 1e4);
  CATCH_CHECK(s.top_activation[1] < 6);
  CATCH_CHECK(s.median_activation == Approx(0.674).margin(0.05));  // median |N(0, 1)|
  // Both thresholds: 500 > 100 but < 1000 x median (~674); 50 among N(0, 0.01^2) is > 1000 x
  // median but not > 100.
  h[0][5][3] = 500.0;
  CATCH_CHECK(hidden_stats(h).massive_activations == 0);
  torch::Tensor small = torch::randn({1, 64, 32}, torch::kFloat64) * 0.01;
  small[0][0][0] = 50.0;
  CATCH_CHECK(hidden_stats(small).massive_activations == 0);
  // Counts are per window, averaged: 2 in window 0 and 0 in window 1 give 1.
  torch::Tensor two = torch::randn({2, 16, 32}, torch::kFloat64);
  two[0][0][0] = -2e4;  // magnitude: a negative entry counts
  two[0][9][1] = 3e4;
  const HiddenStats t = hidden_stats(two);
  CATCH_CHECK(t.massive_activations == 1);
  CATCH_CHECK(t.windows == 2);
}

CATCH_TEST_CASE("kurtosis: m4 / m2^2 per token state, averaged over states") {
  // [0 0 0 1]: mean 1/4, m2 = 3/16, m4 = 21/256 -> 7/3. [1 -1 1 -1]: 1. A constant state has no
  // variance and is left out.
  torch::Tensor h = torch::tensor({0.0, 0.0, 0.0, 1.0, 1.0, -1.0, 1.0, -1.0, 2.0, 2.0, 2.0, 2.0},
                                  torch::kFloat64)
                        .reshape({1, 3, 4});
  CATCH_CHECK(hidden_stats(h).kurtosis == Approx((7.0 / 3.0 + 1.0) / 2));
  torch::manual_seed(3);
  CATCH_CHECK(hidden_stats(torch::randn({1, 256, 256}, torch::kFloat64)).kurtosis == Approx(3).margin(0.05));
  CATCH_CHECK(std::isnan(hidden_stats(torch::ones({1, 2, 4})).kurtosis));
}

CATCH_TEST_CASE("collapse: identical token states have cosine 1 and effective rank 1") {
  const torch::Tensor v = torch::randn({1, 1, 16}, torch::kFloat64);
  const HiddenStats same = hidden_stats(v.expand({1, 8, 16}).clone());
  CATCH_CHECK(same.mean_cosine == Approx(1));
  CATCH_CHECK(same.effective_rank == Approx(1).epsilon(1e-6));
  // Orthogonal states (scaled rows of the identity): cosine 0, effective rank T.
  const torch::Tensor eye = (torch::eye(16, torch::kFloat64).narrow(0, 0, 8) * 3).unsqueeze(0);
  const HiddenStats spread = hidden_stats(eye);
  CATCH_CHECK(spread.mean_cosine == Approx(0).margin(1e-12));
  CATCH_CHECK(spread.effective_rank == Approx(8));
  // Singular values 2, 1, 1: p = [1/2 1/4 1/4], H = 1.5 ln 2, rank 2^1.5.
  torch::Tensor m = torch::zeros({1, 3, 4}, torch::kFloat64);
  m[0][0][0] = 2;
  m[0][1][1] = 1;
  m[0][2][2] = 1;
  CATCH_CHECK(hidden_stats(m).effective_rank == Approx(std::pow(2.0, 1.5)));
  // A window of one token has no pairs; a non-finite state has no rank (and no exception).
  CATCH_CHECK(std::isnan(hidden_stats(torch::randn({1, 1, 4})).mean_cosine));
  torch::Tensor bad = torch::randn({1, 4, 4});
  bad[0][1][1] = std::numeric_limits<float>::infinity();
  CATCH_CHECK(std::isnan(hidden_stats(bad).effective_rank));
}

CATCH_TEST_CASE("published metrics: a softmax model with equal scores stores them in attn_stats") {
  constexpr int64_t kT = 16;
  const std::string toml = "[model]\npreset = \"tiny\"\nvocab_size = 256\ncontext_length = " +
                           std::to_string(kT) + "\n[attention]\nvariant = \"softmax\"\nbackend = \"eager\"\n";
  model::DecoderLM m(config::parse_run_config(toml, "test.toml", {}));
  {
    torch::NoGradGuard g;  // zero q and k: every score 0, so attention is uniform
    for (size_t l = 0; l < m->blocks->size(); ++l) {
      auto& attn = *m->blocks->at<model::BlockImpl>(l).attn;
      attn.q->weight.zero_();
      attn.k->weight.zero_();
    }
  }
  torch::manual_seed(1);
  const torch::Tensor t = torch::randint(256, {4 * kT}, torch::kInt64);
  DiagnosticsOptions opts;
  opts.max_tokens = 4 * kT;
  opts.sink_k.window = 8;  // shorter than the context: Sink_k on its own cut of 8 windows
  opts.sink_k.keys = 3;
  const ModelDiagnostics d = measure(*m, std::vector<int64_t>(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel()), opts);
  CATCH_CHECK(d.sink_k.window == 8);
  CATCH_CHECK(d.sink_k.windows == 8);
  CATCH_REQUIRE(d.hidden.size() == 2);
  CATCH_CHECK(d.hidden[0].windows == 4);
  // Main windows as short as Sink_k's T are its windows: measured in the same pass, same numbers.
  DiagnosticsOptions short_opts = opts;
  short_opts.window = 8;
  const ModelDiagnostics same = measure(*m, std::vector<int64_t>(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel()), short_opts);
  CATCH_CHECK(same.windows == 8);
  CATCH_CHECK(same.sink_k.windows == 8);
  CATCH_CHECK(same.sink_k.sink == d.sink_k.sink);
  for (int64_t k = 0; k < 3; ++k)
    CATCH_CHECK(same.sink_k.alpha[k] == Approx(d.sink_k.alpha[k]).epsilon(1e-12));

  const auto rows = to_attn_stats(d);
  auto find = [&](int64_t layer, const std::string& stat, int64_t idx = -1) {
    for (const auto& r : rows) {
      if (r.layer == layer && r.head == -1 && r.stat == stat && r.index == idx) return r.value;
    }
    return std::numeric_limits<double>::quiet_NaN();
  };
  for (int64_t k = 1; k <= 3; ++k) {
    CATCH_CHECK(find(-1, "alpha_k", k) == Approx(uniform_alpha(8, k)).epsilon(1e-6));
    CATCH_CHECK(find(-1, "alpha_k_uniform", k) == Approx(uniform_alpha(8, k)).epsilon(1e-12));
    // Uniform rows exceed epsilon on key 1 in so short a window: alpha_1 = H_8 / 8 = 0.34.
    CATCH_CHECK(find(1, "sink_k", k) == (k == 1 ? 1 : 0));
  }
  CATCH_CHECK(std::isnan(find(-1, "sink_k", 4)));  // K = 3
  CATCH_CHECK(find(-1, "sink_k_window") == 8);
  CATCH_CHECK(find(-1, "sink_k_epsilon") == 0.3);
  CATCH_CHECK(find(-1, "sink_mass_uniform") == Approx(harmonic(kT) / kT));
  CATCH_CHECK(find(-1, "sink_mass") == Approx(find(-1, "sink_mass_uniform")).epsilon(1e-6));
  CATCH_CHECK(find(-1, "nonzero_ratio") == Approx((kT + 1) / (2.0 * kT)).epsilon(1e-6));
  CATCH_CHECK(find(0, "top_activation", 1) >= find(0, "top_activation", 3));
  CATCH_CHECK(find(0, "massive_activations") == 0);  // a small random model has none
  CATCH_CHECK(find(1, "effective_rank") > 1);
  CATCH_CHECK(find(-1, "mean_cosine") == Approx((find(0, "mean_cosine") + find(1, "mean_cosine")) / 2));
}

}  // namespace published_metrics_test
