// Attention diagnostics (evals/diagnostics): statistics on hand-built weights with known answers,
// and on models whose weights make the answer known (equal scores; Lazy Attention at init), plus a
// random-weights model whose first layer is checked against its softmax twin (the same parameters
// under the softmax normaliser), computed independently here.
#include <torch/torch.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <map>

#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "core/config/run_config.h"
#include "evals/diagnostics/attention_stats.h"
#include "evals/diagnostics/heatmap_png.h"
#include "evals/diagnostics/model_diagnostics.h"
#include "evals/diagnostics/training_probe.h"
#include "model/decoder.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace diagnostics_test {

using namespace attnbench;
using namespace attnbench::evals::diagnostics;
using Catch::Detail::Approx;

namespace {

constexpr int64_t kT = 16;

config::RunConfig make_config(const std::string& variant, const std::vector<std::string>& sets = {}) {
  const std::string toml = "[model]\npreset = \"tiny\"\nvocab_size = 256\ncontext_length = " +
                           std::to_string(kT) + "\n[attention]\nvariant = \"" + variant +
                           "\"\nbackend = \"eager\"\n[data]\nfixed_token_id = 0\n";
  return config::parse_run_config(toml, "test.toml", sets);
}

std::vector<int64_t> random_tokens(int64_t n, int64_t vocab, uint64_t seed) {
  torch::manual_seed(seed);
  const torch::Tensor t = torch::randint(vocab, {n}, torch::kInt64);
  return std::vector<int64_t>(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + n);
}

// Every layer's q and k projections set to zero: all scores are 0 (RoPE rotates a zero vector to
// zero, a zero distance bias adds nothing), so the causal softmax is uniform, p_ij = 1 / (i + 1).
void zero_scores(model::DecoderLMImpl& m) {
  torch::NoGradGuard g;
  for (size_t l = 0; l < m.blocks->size(); ++l) {
    auto& attn = *m.blocks->at<model::BlockImpl>(l).attn;
    attn.q->weight.zero_();
    attn.k->weight.zero_();
  }
}

// Sharper attention than at init (scores of std ~0.02 are nearly uniform) and a random distance
// bias, so that the weights spread far from 1 / n_i.
void sharpen(model::DecoderLMImpl& m, uint64_t seed) {
  torch::NoGradGuard g;
  torch::manual_seed(seed);
  for (auto& p : m.named_parameters()) {
    const std::string& name = p.key();
    if (name.find(".attn.q.weight") != std::string::npos || name.find(".attn.k.weight") != std::string::npos) {
      p.value().normal_(0.0, 0.3);
    } else if (name.find("distance_bias") != std::string::npos) {
      p.value().normal_(0.0, 1.0);
    }
  }
}

// Copies every parameter of `from` that `to` has under the same name.
void copy_shared(model::DecoderLMImpl& from, model::DecoderLMImpl& to) {
  torch::NoGradGuard g;
  auto dst = to.named_parameters();
  for (const auto& p : from.named_parameters()) {
    if (auto* t = dst.find(p.key())) t->copy_(p.value());
  }
}

// Layer weights [B, H, T, T] of `m` on `windows` [B, T].
std::vector<torch::Tensor> weights_of(model::DecoderLMImpl& m, const torch::Tensor& windows) {
  torch::NoGradGuard g;
  m.eval();
  std::vector<torch::Tensor> w;
  m.forward(windows, &w);
  return w;
}

}  // namespace

CATCH_TEST_CASE("diagnostics: hand-built weights give the known sink mass, sparsity, mass and entropy") {
  // Head 0: uniform causal rows a_ij = 1/(i+1). Head 1: rows [1], [0 0], [.5 0 .25], [0 0 0 .5].
  // Entries above the diagonal hold 9: they are not weights and must be ignored.
  torch::Tensor w = torch::full({1, 2, 4, 4}, 9.0, torch::kFloat32);
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j <= i; ++j) w[0][0][i][j] = 1.0 / double(i + 1);
  }
  const float head1[4][4] = {{1, 9, 9, 9}, {0, 0, 9, 9}, {0.5, 0, 0.25, 9}, {0, 0, 0, 0.5}};
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 4; ++j) w[0][1][i][j] = head1[i][j];
  }
  const auto s = head_stats(w, /*fixed_position=*/2);
  CATCH_REQUIRE(s.size() == 2);

  CATCH_CHECK(s[0].sink_mass == Approx((1 + 1 / 2.0 + 1 / 3.0 + 1 / 4.0) / 4));
  CATCH_CHECK(s[0].sparsity == 0);
  CATCH_CHECK(s[0].row_mass_mean == Approx(1));
  CATCH_CHECK(s[0].row_mass_min == Approx(1));
  CATCH_CHECK(s[0].row_mass_max == Approx(1));
  CATCH_CHECK(s[0].entropy == Approx((std::log(1.0) + std::log(2.0) + std::log(3.0) + std::log(4.0)) / 4));
  CATCH_CHECK(s[0].zero_rows == 0);
  CATCH_CHECK(s[0].fixed_token_mass == Approx((1 / 3.0 + 1 / 4.0) / 2));
  CATCH_CHECK(s[0].rows == 4);

  CATCH_CHECK(s[1].sink_mass == Approx((1 + 0 + 0.5 + 0) / 4));
  CATCH_CHECK(s[1].sparsity == Approx(6.0 / 10.0));  // 6 exact zeros among 10 causal entries
  CATCH_CHECK(s[1].row_mass_mean == Approx((1 + 0 + 0.75 + 0.5) / 4));
  CATCH_CHECK(s[1].row_mass_min == 0);
  CATCH_CHECK(s[1].row_mass_max == Approx(1));
  CATCH_CHECK(s[1].zero_rows == Approx(0.25));
  // Rows with mass: [1] -> 0, [2/3 0 1/3] -> H(2/3, 1/3), [0 0 0 1] -> 0; the zero row is excluded.
  const double h = -(2 / 3.0 * std::log(2 / 3.0) + 1 / 3.0 * std::log(1 / 3.0));
  CATCH_CHECK(s[1].entropy == Approx(h / 3));
  CATCH_CHECK(s[1].fixed_token_mass == Approx((0.25 + 0) / 2));

  CATCH_CHECK(sink_rate(s, 0.4) == Approx(0.5));
  CATCH_CHECK(sink_rate(s, 0.6) == 0);
  CATCH_CHECK(sink_rate(s, 0.3) == 1);
  const HeadStats m = mean_over_heads(s);
  CATCH_CHECK(m.sink_mass == Approx((s[0].sink_mass + s[1].sink_mass) / 2));
  CATCH_CHECK(m.row_mass_min == 0);
  CATCH_CHECK(m.row_mass_max == Approx(1));
}

CATCH_TEST_CASE("diagnostics: accumulating batches equals one pass, a wrong shape is refused") {
  torch::manual_seed(3);
  torch::Tensor w = torch::relu(torch::randn({4, 3, 8, 8}, torch::kFloat64)).tril();
  const auto once = head_stats(w);
  LayerStatsAccumulator acc(3);
  acc.add(w.narrow(0, 0, 1));
  acc.add(w.narrow(0, 1, 3));
  const auto twice = acc.finish();
  for (size_t h = 0; h < 3; ++h) {
    CATCH_CHECK(twice[h].sink_mass == Approx(once[h].sink_mass));
    CATCH_CHECK(twice[h].sparsity == Approx(once[h].sparsity));
    CATCH_CHECK(twice[h].entropy == Approx(once[h].entropy));
    CATCH_CHECK(twice[h].row_mass_min == once[h].row_mass_min);
    CATCH_CHECK(twice[h].zero_rows == Approx(once[h].zero_rows));
  }
  CATCH_CHECK_THROWS(acc.add(torch::zeros({1, 2, 8, 8})));
  CATCH_CHECK_THROWS(LayerStatsAccumulator(3).finish());
}

CATCH_TEST_CASE("diagnostics: a uniform distribution has entropy log n, a one-hot one 0") {
  torch::Tensor w = torch::zeros({1, 1, 5, 5}, torch::kFloat32);
  w[0][0][4].fill_(0.2);       // the last row is uniform over its 5 keys
  for (int i = 0; i < 4; ++i) w[0][0][i][i] = 0.3f;  // one-hot rows (mass 0.3, normalised to 1)
  const auto s = head_stats(w);
  CATCH_CHECK(s[0].entropy == Approx(std::log(5.0) / 5));
  CATCH_CHECK(s[0].row_mass_min == Approx(0.3));
}

CATCH_TEST_CASE("diagnostics: softmax with equal scores has sink mass mean_i 1/(i+1)") {
  auto cfg = make_config("softmax");
  model::DecoderLM m(cfg);
  zero_scores(*m);
  DiagnosticsOptions opts;
  opts.max_tokens = 3 * kT;
  const ModelDiagnostics d = measure(*m, random_tokens(3 * kT + 5, 256, 1), opts);
  CATCH_CHECK(d.windows == 3);
  CATCH_CHECK(d.window == kT);
  double expected = 0, entropy = 0;
  for (int64_t i = 0; i < kT; ++i) {
    expected += 1.0 / double(i + 1);
    entropy += std::log(double(i + 1));
  }
  expected /= kT;
  entropy /= kT;
  for (const auto& layer : d.heads) {
    for (const auto& h : layer) {
      CATCH_CHECK(h.sink_mass == Approx(expected).epsilon(1e-6));
      CATCH_CHECK(h.sparsity == 0);
      CATCH_CHECK(h.row_mass_mean == Approx(1).epsilon(1e-6));
      CATCH_CHECK(h.entropy == Approx(entropy).epsilon(1e-5));
    }
  }
  CATCH_CHECK(d.learned.empty());  // softmax learns nothing in its attention

  // The summaries for the sweep table: layer rows (head -1) and model rows (layer = head = -1).
  const auto rows = to_attn_stats(d);
  auto find = [&](int64_t layer, int64_t head, const std::string& stat) {
    for (const auto& r : rows) {
      if (r.layer == layer && r.head == head && r.stat == stat) return r.value;
    }
    return std::numeric_limits<double>::quiet_NaN();
  };
  CATCH_CHECK(find(-1, -1, "sink_mass") == Approx(expected).epsilon(1e-6));
  CATCH_CHECK(find(1, -1, "sparsity") == 0);
  CATCH_CHECK(find(-1, -1, "sink_rate") == (expected > 0.3 ? 1.0 : 0.0));
  CATCH_CHECK(find(-1, -1, "tokens") == 3 * kT);
  CATCH_CHECK(find(0, 3, "sink_mass") == Approx(expected).epsilon(1e-6));
}

CATCH_TEST_CASE("diagnostics: progress after every batch, and a stop request stops between batches") {
  auto cfg = make_config("softmax");
  model::DecoderLM m(cfg);
  DiagnosticsOptions opts;
  opts.max_tokens = 5 * kT;
  opts.batch_size = 2;
  std::vector<std::pair<int64_t, int64_t>> told;
  opts.progress = [&](int64_t done, int64_t total) { told.emplace_back(done, total); };
  const std::vector<int64_t> tokens = random_tokens(5 * kT, 256, 3);
  measure(*m, tokens, opts);
  // Windows of kT: Sink_k's windows are measured in the same pass (no second one).
  const std::vector<std::pair<int64_t, int64_t>> expected = {{2, 5}, {4, 5}, {5, 5}};
  CATCH_CHECK(told == expected);
  int asked = 0;
  opts.stop = [&] { return ++asked == 2; };  // SIGTERM arrives during the second batch
  told.clear();
  CATCH_CHECK_THROWS_AS(measure(*m, tokens, opts), Stopped);
  CATCH_CHECK(told.size() == 2);  // nothing measured after the stop request
}

CATCH_TEST_CASE("diagnostics: the training probe logs per-layer sink mass and learned tau") {
  auto cfg = make_config("lazy", {"attention.tau_init=-0.5"});
  model::DecoderLM m(cfg);
  const std::vector<int64_t> tokens = random_tokens(kT, 256, 5);
  const auto probe = training_probe(*m, torch::tensor(tokens));
  std::map<std::string, double> got(probe.begin(), probe.end());
  CATCH_CHECK(got.size() == probe.size());  // no name twice
  DiagnosticsOptions opts;
  opts.max_tokens = kT;
  const ModelDiagnostics d = measure(*m, tokens, opts);
  double all = 0;
  for (int64_t l = 0; l < d.n_layer; ++l) {
    double layer = 0;
    for (const auto& h : d.heads[l]) layer += h.sink_mass / double(d.n_head);
    all += layer / double(d.n_layer);
    CATCH_CHECK(got.at(fmt::format("attn/sink_mass/layer_{:02d}", l)) == Approx(layer));
    // tau per head starts at tau_init: every layer's mean is -0.5.
    CATCH_CHECK(got.at(fmt::format("attn/tau/layer_{:02d}", l)) == Approx(-0.5));
  }
  CATCH_CHECK(got.at("attn/sink_mass") == Approx(all));
  CATCH_CHECK(got.at("attn/tau") == Approx(-0.5));
  CATCH_CHECK(got.count("attn/distance_bias") == 0);  // a profile, not one number per head
}

CATCH_TEST_CASE("diagnostics: Mask@k puts the fixed token at k and measures the mass there") {
  DiagnosticsOptions opts;
  opts.window = 8;
  opts.max_tokens = 20;
  opts.fixed_position = 5;
  opts.fixed_token_id = 7;
  std::vector<int64_t> tokens(20);
  for (int i = 0; i < 20; ++i) tokens[i] = 100 + i;
  const torch::Tensor w = diagnostic_windows(tokens, opts);
  CATCH_REQUIRE(w.sizes() == torch::IntArrayRef({2, 8}));
  CATCH_CHECK(w[0][5].item<int64_t>() == 7);
  CATCH_CHECK(w[1][5].item<int64_t>() == 7);
  CATCH_CHECK(w[1][0].item<int64_t>() == 108);
  CATCH_CHECK(w[1][6].item<int64_t>() == 114);

  auto cfg = make_config("softmax");
  model::DecoderLM m(cfg);
  zero_scores(*m);
  DiagnosticsOptions mo;
  mo.max_tokens = 2 * kT;
  mo.fixed_position = 4;
  mo.fixed_token_id = 0;
  const ModelDiagnostics d = measure(*m, random_tokens(2 * kT, 256, 2), mo);
  double expected = 0;  // rows i >= 4 each give 1/(i+1) to position 4
  for (int64_t i = 4; i < kT; ++i) expected += 1.0 / double(i + 1);
  expected /= double(kT - 4);
  CATCH_CHECK(d.heads[0][0].fixed_token_mass == Approx(expected).epsilon(1e-6));
  bool stored = false;
  for (const auto& r : to_attn_stats(d)) stored = stored || (r.stat == "fixed_token_mass" && r.index == 4);
  CATCH_CHECK(stored);
}

CATCH_TEST_CASE("diagnostics: lazy at init with equal scores zeroes every weight (sparsity 1)") {
  // p_ij = 1/n_i and t = tau/n_i = -1/n_i: ReLU(1/n_i - 1/n_i) = 0 everywhere.
  for (const char* form : {"per_head_over_len", "per_token"}) {
    CATCH_INFO(form);
    auto cfg = make_config("lazy", {std::string("attention.tau_form=") + form});
    model::DecoderLM m(cfg);
    zero_scores(*m);
    DiagnosticsOptions opts;
    opts.max_tokens = 2 * kT;
    const ModelDiagnostics d = measure(*m, random_tokens(2 * kT, 256, 4), opts);
    for (const auto& layer : d.heads) {
      for (const auto& h : layer) {
        CATCH_CHECK(h.sparsity == 1);
        CATCH_CHECK(h.zero_rows == 1);
        CATCH_CHECK(h.row_mass_max == 0);
        CATCH_CHECK(h.sink_mass == 0);
        CATCH_CHECK(std::isnan(h.entropy));  // no row has mass to normalise
      }
    }
    // Learned offsets at init: tau_h = tau_init = -1; per token g_h(x) = bias = -1 for every x.
    CATCH_REQUIRE(d.learned.size() == 2);
    const LearnedValues& tau = d.learned[0];
    CATCH_CHECK(tau.name == (std::string(form) == "per_token" ? "tau_offset_mean" : "tau"));
    CATCH_CHECK(!tau.profile);
    CATCH_REQUIRE(tau.values.size() == 2);
    for (const auto& layer : tau.values) {
      for (const auto& head : layer) CATCH_CHECK(head.at(0) == Approx(-1.0).epsilon(1e-6));
    }
    const LearnedValues& bias = d.learned[1];
    CATCH_CHECK(bias.name == "distance_bias");
    CATCH_CHECK(bias.profile);
    CATCH_REQUIRE(bias.values.size() == 2);
    CATCH_CHECK(bias.values[0].size() == static_cast<size_t>(cfg.model.n_head));
    CATCH_CHECK(bias.values[0][0].size() == static_cast<size_t>(kT));  // r < min(W, window)
  }
}

CATCH_TEST_CASE("diagnostics: lazy sparsity and surviving mass match its softmax twin") {
  // The same parameters under the softmax normaliser (rope_bias = rope+distance_bias + softmax)
  // give p; Lazy Attention (tau = -1 at init) keeps a_ij = ReLU(p_ij - 1/n_i). So its sparsity is
  // the share of causal p_ij <= 1/n_i and its unnormalised row mass is sum_j max(p_ij - 1/n_i, 0).
  auto lazy_cfg = make_config("lazy");
  auto twin_cfg = make_config("rope_bias");
  auto renorm_cfg = make_config("lazy", {"attention.renormalize=true"});
  model::DecoderLM lazy(lazy_cfg), twin(twin_cfg), renorm(renorm_cfg);
  sharpen(*lazy, 11);
  copy_shared(*lazy, *twin);
  copy_shared(*lazy, *renorm);

  const auto tokens = random_tokens(3 * kT, 256, 5);
  DiagnosticsOptions opts;
  opts.max_tokens = 3 * kT;
  const ModelDiagnostics d = measure(*lazy, tokens, opts);
  const ModelDiagnostics dr = measure(*renorm, tokens, opts);
  const auto p_layers = weights_of(*twin, diagnostic_windows(tokens, [&] {
                                     DiagnosticsOptions o = opts;
                                     o.window = kT;
                                     return o;
                                   }()));

  // Layer 0 only: it sees the same input in all three models; deeper layers see the output of
  // differently normalised layers below them.
  double total_sparsity = 0;
  {
    const size_t l = 0;
    const torch::Tensor p = p_layers[l].to(torch::kFloat64);  // [B, H, T, T]
    const int64_t B = p.size(0), H = p.size(1);
    for (int64_t h = 0; h < H; ++h) {
      int64_t at_most_uniform = 0, causal = 0;
      double mass = 0, mass_max = 0;
      auto a = p.accessor<double, 4>();
      for (int64_t b = 0; b < B; ++b) {
        for (int64_t i = 0; i < kT; ++i) {
          double row = 0;
          for (int64_t j = 0; j <= i; ++j) {
            const double u = 1.0 / double(i + 1);
            ++causal;
            if (a[b][h][i][j] <= u) ++at_most_uniform;
            row += std::max(a[b][h][i][j] - u, 0.0);
          }
          mass += row;
          mass_max = std::max(mass_max, row);
        }
      }
      const HeadStats& s = d.heads[l][h];
      CATCH_INFO("layer " << l << " head " << h);
      CATCH_CHECK(s.sparsity == Approx(double(at_most_uniform) / double(causal)).margin(1e-12));
      CATCH_CHECK(s.row_mass_mean == Approx(mass / double(B * kT)).epsilon(1e-4));
      CATCH_CHECK(s.row_mass_max == Approx(mass_max).epsilon(1e-4));
      CATCH_CHECK(s.row_mass_max < 1);  // unnormalised: mass is removed, never added
      // Renormalised: the same zeros, and every row with mass sums to 1.
      const HeadStats& r = dr.heads[l][h];
      CATCH_CHECK(r.sparsity == s.sparsity);
      CATCH_CHECK(r.zero_rows == s.zero_rows);
      CATCH_CHECK(r.row_mass_max == Approx(1).epsilon(1e-6));
      CATCH_CHECK(r.row_mass_mean == Approx(1 - r.zero_rows).epsilon(1e-6));
      total_sparsity += s.sparsity;
    }
  }
  // The sharpened weights are far from uniform: the check above is not the trivial all-zero case.
  const double mean_sparsity = total_sparsity / double(p_layers[0].size(1));
  CATCH_CHECK(mean_sparsity > 0.2);
  CATCH_CHECK(mean_sparsity < 0.95);
}

CATCH_TEST_CASE("diagnostics: heatmap colours and the PNG written") {
  CATCH_CHECK(heatmap_colour(0.0, 1.0, false).r == 255);  // exact zero: white
  CATCH_CHECK(heatmap_colour(0.5, 1.0, true).r == 222);   // future key: grey
  const Rgb top = heatmap_colour(1.0, 1.0, false), low = heatmap_colour(0.01, 1.0, false);
  CATCH_CHECK(top.b < low.b);
  CATCH_CHECK(top.r < low.r);
  // Negative weights (differential attention) are red, not the white of exact zeros, and scaled
  // by the largest |weight|: -1 is as dark as +1 on its ramp.
  const Rgb neg = heatmap_colour(-1.0, 1.0, false), faint = heatmap_colour(-0.01, 1.0, false);
  CATCH_CHECK(neg.r > neg.b);
  CATCH_CHECK(neg.g < faint.g);
  CATCH_CHECK(faint.r < 255);
  const auto signed_px = heatmap_pixels({-2, 0, 1, 0.5}, 2, 1);  // max |a| = 2 is the darkest red
  CATCH_CHECK(signed_px[0] == neg.r);
  CATCH_CHECK(signed_px[1] == neg.g);

  const std::vector<float> a = {1, 0, 0.5, 0.5};  // [[1, future], [0.5, 0.5]]
  const auto px = heatmap_pixels(a, 2, 3);
  CATCH_REQUIRE(px.size() == 6 * 6 * 3);
  CATCH_CHECK(px[(0 * 6 + 4) * 3] == 222);  // row 0, column 1 is a future key
  CATCH_CHECK(px[(0 * 6 + 0) * 3] == top.r);

  const auto path = std::filesystem::temp_directory_path() / "attnbench-diag-heatmap.png";
  write_heatmap_png(path, a, 2, 5);
  std::ifstream f(path, std::ios::binary);
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  CATCH_REQUIRE(bytes.size() > 24);
  const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  CATCH_CHECK(std::equal(signature, signature + 8, bytes.begin()));
  // IHDR width and height (big-endian at bytes 16 and 20): 2 entries x 5 px.
  CATCH_CHECK(bytes[19] == 10);
  CATCH_CHECK(bytes[23] == 10);
}

}  // namespace diagnostics_test
