// The defining properties of stick-breaking attention (variants/stick_breaking.cpp) and
// differential attention (variants/differential.cpp), in float64: stick-breaking against a plain
// product loop, its shares and remainder, and its behaviour at extreme scores; differential at
// lambda = 0 against softmax attention on the first halves, its row sums 1 - lambda, lambda_init by
// depth, its parameters and its head-dimension check; both reject an unknown position.
#include <torch/torch.h>

#include <cmath>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "core/config/run_config.h"
#include "tests/variants/support.h"
#include "variants/position.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace stick_breaking_differential_test {

using namespace attnbench;
using namespace attnbench::variants;
using Catch::Matchers::Contains;
using config::Value;

namespace {
const auto f64 = torch::kFloat64;
constexpr int64_t B = 2, H = 3, T = 7, D = 4, C = 6;

using test::Inputs;
using test::max_diff;
Inputs draw(uint64_t seed, double q_scale = 1.0) { return test::draw_inputs(seed, B, H, T, D, C, q_scale); }

// The scores without RoPE: q_i . k_j / sqrt(D) - slope_h (i - j) (slopes empty: no ALiBi).
double score(const Inputs& in, int64_t b, int64_t h, int64_t i, int64_t j,
             const std::vector<double>& slopes) {
  double s = (in.q[b][h][i] * in.k[b][h][j]).sum().item<double>() / std::sqrt(double(D));
  return slopes.empty() ? s : s - slopes[h] * double(i - j);
}
}  // namespace

CATCH_TEST_CASE("stick_breaking equals a direct product loop, with no position and with ALiBi") {
  const Inputs in = draw(31);
  for (const std::string position : {"none", "alibi"}) {
    CATCH_CAPTURE(position);
    const auto slopes = position == "alibi" ? alibi_slopes(H) : std::vector<double>{};
    auto m = test::build({"stick_breaking", {{"position", Value{position}}}}, H, D, C);
    torch::Tensor w;
    const auto out = m->forward(in.q, in.k, in.v, in.x, &w);
    auto want_w = torch::zeros({B, H, T, T}, f64), want_out = torch::zeros({B, H, T, D}, f64);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < T; ++i) {
          double taken = 0.0;
          for (int64_t j = 0; j < i; ++j) {
            double a = 1.0 / (1.0 + std::exp(-score(in, b, h, i, j, slopes)));  // beta_ij
            for (int64_t k = j + 1; k < i; ++k)
              a *= 1.0 - 1.0 / (1.0 + std::exp(-score(in, b, h, i, k, slopes)));
            want_w[b][h][i][j] = a;
            want_out[b][h][i] += a * in.v[b][h][j];
            taken += a;
          }
          want_w[b][h][i][i] = 1.0 - taken;  // the remainder, on the query's own value
          want_out[b][h][i] += (1.0 - taken) * in.v[b][h][i];
        }
    CATCH_CHECK(max_diff(w, want_w) < 1e-12);
    CATCH_CHECK(max_diff(out, want_out) < 1e-12);
  }
}

CATCH_TEST_CASE("stick_breaking: each share is at most its break point, each row sums to 1") {
  const Inputs in = draw(32, 2.0);
  auto m = test::build({"stick_breaking", {}}, H, D, C);
  torch::Tensor w;
  m->forward(in.q, in.k, in.v, in.x, &w);
  const auto s = torch::matmul(in.q, in.k.transpose(-2, -1)) / std::sqrt(double(D));
  const auto beta = torch::sigmoid(s);
  const auto earlier = torch::ones({T, T}, torch::kBool).tril(-1);
  const auto shares = w.masked_fill(earlier.logical_not(), 0.0);
  CATCH_CHECK((shares <= beta * earlier + 1e-15).all().item<bool>());  // a_ij <= beta_ij, j < i
  CATCH_CHECK((shares.sum(-1) <= 1.0 + 1e-15).all().item<bool>());
  CATCH_CHECK((w >= 0).all().item<bool>());
  CATCH_CHECK(max_diff(w.sum(-1), torch::ones({B, H, T}, f64)) < 1e-14);
  // The diagonal holds what the earlier keys left: prod_{j<i} (1 - beta_ij).
  const auto left = torch::exp(torch::log1p(-beta).masked_fill(earlier.logical_not(), 0.0).sum(-1));
  CATCH_CHECK(max_diff(w.diagonal(0, -2, -1), left) < 1e-12);
  CATCH_CHECK(w.select(2, 0).select(2, 0).eq(1.0).all().item<bool>());  // row 0: all remainder
}

CATCH_TEST_CASE("stick_breaking at scores around +-50: finite, the nearest key or the query wins") {
  // Every score +50 (q along k): the nearest earlier key takes the whole stick. Every score -50:
  // no key takes anything and the query keeps its own value. Random signs: finite throughout.
  const int64_t t = 6;
  auto m = test::build({"stick_breaking", {}}, H, D, C);
  const auto k = torch::ones({1, H, t, D}, f64), x = torch::zeros({1, t, C}, f64);
  const auto eye = torch::eye(t, f64), below = torch::eye(t, f64).roll(1, 0).tril(-1);
  for (double s : {50.0, -50.0}) {
    CATCH_CAPTURE(s);
    const auto q = torch::full({1, H, t, D}, s * std::sqrt(double(D)) / double(D), f64);
    torch::Tensor w;
    m->forward(q, k, torch::randn({1, H, t, D}, f64), x, &w);
    auto want = s > 0 ? below.clone() : eye.clone();
    want[0][0] = 1.0;  // row 0 has no earlier key
    CATCH_CHECK(max_diff(w[0][0], want) < 1e-15);
  }
  for (auto dtype : {torch::kFloat64, torch::kFloat32}) {
    CATCH_CAPTURE(dtype);
    torch::manual_seed(33);
    auto mt = test::build({"stick_breaking", {}}, H, D, C);
    mt->to(dtype);
    auto q = (25.0 * torch::randn({B, H, T, D})).to(dtype).requires_grad_(true);
    auto kk = torch::randn({B, H, T, D}).to(dtype).requires_grad_(true);
    auto v = torch::randn({B, H, T, D}).to(dtype).requires_grad_(true);
    const auto s = torch::matmul(q, kk.transpose(-2, -1)) / std::sqrt(double(D));
    CATCH_CHECK(s.abs().max().item<double>() > 50.0);
    torch::Tensor w;
    const auto out = mt->forward(q, kk, v, torch::zeros({B, T, C}).to(dtype), &w);
    (out * torch::randn_like(out)).sum().backward();
    CATCH_CHECK(torch::isfinite(out).all().item<bool>());
    CATCH_CHECK((w >= 0).all().item<bool>());  // the remainder too, where keys took nearly all
    CATCH_CHECK(max_diff(w.sum(-1), torch::ones_like(w.sum(-1))) < 1e-5);
    for (const auto& g : {q.grad(), kk.grad(), v.grad()}) {
      CATCH_REQUIRE(g.defined());
      CATCH_CHECK(torch::isfinite(g).all().item<bool>());
    }
  }
}

namespace {
// A differential module for `layer` (test::build's context has layer 0).
std::shared_ptr<AttentionVariantImpl> build_differential(const config::ParamMap& overrides,
                                                         int64_t layer) {
  auto ctx = test::context({"differential", overrides}, H, D, C);
  ctx.layer = layer;
  auto m = make_variant(ctx);
  m->to(f64);
  return m;
}

// The differential lambda from the module's four vectors.
double lambda_of(torch::nn::Module& m, double lambda_init) {
  auto p = test::params_of(m);
  return std::exp((p.at("lambda_q1") * p.at("lambda_k1")).sum().item<double>()) -
         std::exp((p.at("lambda_q2") * p.at("lambda_k2")).sum().item<double>()) + lambda_init;
}

double learned_lambda(AttentionVariantImpl& m, const torch::Tensor& x, int64_t head) {
  for (const auto& s : m.learned(x)) {
    if (s.name == "lambda") {
      CATCH_CHECK(s.kind == LearnedStatistic::Kind::PerHead);
      CATCH_REQUIRE(s.values.size(0) == H);
      return s.values[head].item<double>();
    }
  }
  CATCH_FAIL("no learned statistic 'lambda'");
  return 0.0;
}

// lambda_init by the paper's formula, written out: 0.8 - 0.6 exp(-0.3 l).
constexpr double kLambdaInit[] = {0.2, 0.35550906759097, 0.66612190391094};  // l = 0, 1, 5
}  // namespace

CATCH_TEST_CASE("differential at lambda = 0 is RMSNorm(softmax attention on the first halves)") {
  const Inputs in = draw(41);
  const int64_t half = D / 2;
  for (const std::string position : {"rope", "none"}) {
    CATCH_CAPTURE(position);
    const config::ParamMap over = {{"position", Value{position}}};
    auto m = build_differential(over, 0);
    // lambda = exp(0) - exp(ln(1 + lambda_init)) + lambda_init = 0.
    const double lambda_init = kLambdaInit[0];
    test::set_param(*m, "lambda_q1", torch::zeros({half}, f64));
    test::set_param(*m, "lambda_k1", torch::zeros({half}, f64));
    test::set_param(*m, "lambda_q2", torch::full({half}, std::sqrt(std::log1p(lambda_init) / half), f64));
    test::set_param(*m, "lambda_k2", torch::full({half}, std::sqrt(std::log1p(lambda_init) / half), f64));
    const auto gamma = torch::rand({D}, f64) + 0.5;
    test::set_param(*m, "subln.weight", gamma);
    CATCH_CHECK(std::abs(lambda_of(*m, lambda_init)) < 1e-15);
    torch::Tensor w, want_w;
    const auto out = m->forward(in.q, in.k, in.v, in.x, &w);
    // Softmax attention on the first halves, RoPE (when chosen) on a head of D/2.
    const auto softmax = test::build({"softmax", over}, H, half, C);
    const auto o = softmax->forward(in.q.narrow(-1, 0, half), in.k.narrow(-1, 0, half), in.v,
                                    in.x, &want_w);
    const auto rms = torch::sqrt(o.pow(2).mean(-1, /*keepdim=*/true) + 1e-5);
    CATCH_CHECK(max_diff(w, want_w) < 1e-14);
    CATCH_CHECK(max_diff(out, o / rms * gamma * (1.0 - lambda_init)) < 1e-12);
  }
}

CATCH_TEST_CASE("differential: rows of weights sum to 1 - lambda, which learned() reports") {
  const Inputs in = draw(42);
  auto m = build_differential({}, 0);
  torch::manual_seed(43);
  test::randomize_parameters(*m, {});
  const double lambda = lambda_of(*m, kLambdaInit[0]);
  CATCH_CHECK(std::abs(lambda) > 0.05);  // the check below could tell a missing lambda
  torch::Tensor w;
  m->forward(in.q, in.k, in.v, in.x, &w);
  CATCH_CHECK(max_diff(w.sum(-1), torch::full({B, H, T}, 1.0 - lambda, f64)) < 1e-13);
  CATCH_CHECK(w.triu(1).abs().max().item<double>() == 0.0);
  for (int64_t h = 0; h < H; ++h)
    CATCH_CHECK(std::abs(learned_lambda(*m, in.x, h) - lambda) < 1e-14);
}

CATCH_TEST_CASE("differential: lambda_init = 0.8 - 0.6 exp(-0.3 l) for the 0-based layer l") {
  // With the four vectors 0, lambda = 1 - 1 + lambda_init: rows sum to 1 - lambda_init, and the
  // normed output is scaled by 1 - lambda_init.
  const Inputs in = draw(44);
  for (auto [layer, want] : {std::pair{int64_t{0}, kLambdaInit[0]},
                             std::pair{int64_t{1}, kLambdaInit[1]},
                             std::pair{int64_t{5}, kLambdaInit[2]}}) {
    CATCH_CAPTURE(layer);
    auto m = build_differential({}, layer);
    for (const char* name : {"lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"})
      test::set_param(*m, name, torch::zeros({D / 2}, f64));
    CATCH_CHECK(std::abs(learned_lambda(*m, in.x, 0) - want) < 1e-12);
    torch::Tensor w;
    const auto out = m->forward(in.q, in.k, in.v, in.x, &w);
    CATCH_CHECK(max_diff(w.sum(-1), torch::full({B, H, T}, 1.0 - want, f64)) < 1e-13);
    const auto o = torch::matmul(w, in.v);
    const auto rms = torch::sqrt(o.pow(2).mean(-1, /*keepdim=*/true) + 1e-5);
    CATCH_CHECK(max_diff(out, o / rms * (1.0 - want)) < 1e-12);
  }
}

CATCH_TEST_CASE("differential: four lambda vectors of D/2 and a norm weight of D per layer") {
  for (const std::string position : {"rope", "distance_bias"}) {
    CATCH_CAPTURE(position);
    config::ParamMap over = {{"position", Value{position}}};
    if (position == "distance_bias") over["bias_window"] = Value{int64_t{5}};
    auto m = build_differential(over, 2);
    auto p = test::params_of(*m);
    for (const char* name : {"lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"}) {
      CATCH_CAPTURE(name);
      CATCH_REQUIRE(p.count(name) == 1);
      CATCH_CHECK(p.at(name).sizes() == torch::IntArrayRef({D / 2}));
    }
    CATCH_REQUIRE(p.count("subln.weight") == 1);
    CATCH_CHECK(p.at("subln.weight").sizes() == torch::IntArrayRef({D}));
    const int64_t position_part = position == "distance_bias" ? H * 5 : 0;
    CATCH_CHECK(variant_parameter_count(test::context({"differential", over}, H, D, C)) ==
                3 * D + position_part);
  }
}

CATCH_TEST_CASE("differential needs a head dimension divisible by 4 with RoPE, by 2 without") {
  auto parse = [](const std::string& model, const std::string& position) {
    return config::parse_run_config("[model]\n" + model +
                                        "\n[attention]\nvariant = \"differential\"\nposition = \"" +
                                        position + "\"\n",
                                    "cfg.toml", {});
  };
  // d_model 132 over 6 heads: D = 22, even but not a multiple of 4.
  CATCH_CHECK_THROWS_AS(parse("d_model = 132\nn_head = 6", "rope"), InputError);
  CATCH_CHECK_THROWS_WITH(parse("d_model = 132\nn_head = 6", "rope"),
                          Contains("cfg.toml:3"));  // the n_head line
  CATCH_CHECK_THROWS_WITH(parse("d_model = 132\nn_head = 6", "rope"),
                          Contains("divisible by 4") && Contains("= 22"));
  CATCH_CHECK_NOTHROW(parse("d_model = 132\nn_head = 6", "none"));
  CATCH_CHECK_THROWS_WITH(parse("d_model = 132\nn_head = 4", "none"),  // D = 33
                          Contains("divisible by 2") && Contains("= 33"));
  CATCH_CHECK_NOTHROW(parse("d_model = 128\nn_head = 4", "rope+distance_bias"));
}

CATCH_TEST_CASE("stick_breaking and differential reject an unknown position before any work") {
  // Their schemas take the position options at static initialisation, from another file's table:
  // an empty list there would accept any position and fail only when the model is built.
  for (const std::string variant : {"stick_breaking", "differential"}) {
    CATCH_CAPTURE(variant);
    const auto parse = [&] {
      return config::parse_run_config(
          "[attention]\nvariant = \"" + variant + "\"\nposition = \"rpoe\"\n", "cfg.toml", {});
    };
    CATCH_CHECK_THROWS_AS(parse(), InputError);
    CATCH_CHECK_THROWS_WITH(parse(), Contains("cfg.toml:3") && Contains("attention.position") &&
                                         Contains("rope+distance_bias"));
  }
}

}  // namespace stick_breaking_differential_test
