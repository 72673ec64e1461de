// The formulas of the three 2025-26 sink cures, in float64, each against softmax attention built
// the way the model builds it: head-wise RMSNorm (variants/head_rmsnorm.cpp) is the softmax output
// normalised per head and query; Differential V2 (variants/differential_v2.cpp) with q2 = q and
// lambda = 0 is half the softmax output, its rows summing to 1 - sigmoid(lambda) per token and
// head; VGA (variants/vga.cpp) at W_g = 0 halves the values, with a gate per key token from the
// values of the key/value heads.
#include <torch/torch.h>

#include <cmath>

#include <catch2/catch.hpp>

#include "core/config/run_config.h"
#include "tests/variants/support.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace sink_cures_2026_test {

using namespace attnbench;
using namespace attnbench::variants;
using config::Value;

namespace {
const auto f64 = torch::kFloat64;
constexpr int64_t B = 2, H = 4, T = 7, D = 4, C = 6;

using test::Inputs;
using test::max_diff;
Inputs draw(uint64_t seed) { return test::draw_inputs(seed, B, H, T, D, C); }

// Softmax attention with RoPE and its weights, as the softmax preset computes them.
torch::Tensor softmax_attention(const Inputs& in, torch::Tensor* weights) {
  return test::build({"softmax", {}}, H, D, C)->forward(in.q, in.k, in.v, in.x, weights);
}
}  // namespace

CATCH_TEST_CASE("head_rmsnorm: the softmax output divided by its RMS per head and query, times the gain") {
  const Inputs in = draw(51);
  torch::Tensor want_w;
  const torch::Tensor o = softmax_attention(in, &want_w);
  const torch::Tensor rms = torch::sqrt(o.pow(2).mean(-1, /*keepdim=*/true) + 1e-5);  // model.norm_eps
  {
    auto m = test::build({"head_rmsnorm", {}}, H, D, C);  // the gain shared by the heads
    CATCH_CHECK(test::params_of(*m).at("head_norm.weight").sizes() == torch::IntArrayRef{D});
    const auto gain = torch::rand({D}, f64) + 0.5;
    test::set_param(*m, "head_norm.weight", gain);
    torch::Tensor w;
    const auto out = m->forward(in.q, in.k, in.v, in.x, &w);
    CATCH_CHECK(max_diff(w, want_w) < 1e-14);  // the weights are softmax's
    CATCH_CHECK(max_diff(out, o / rms * gain) < 1e-12);
  }
  auto m = test::build({"head_rmsnorm", {{"head_norm_weight", Value{std::string("per_head")}}}}, H, D, C);
  CATCH_CHECK(test::params_of(*m).at("head_norm.weight").sizes() == torch::IntArrayRef{H, D});
  const auto gain = torch::rand({H, D}, f64) + 0.5;
  test::set_param(*m, "head_norm.weight", gain);
  const auto out = m->forward(in.q, in.k, in.v, in.x);
  CATCH_CHECK(max_diff(out, o / rms * gain.unsqueeze(1)) < 1e-12);
  // At gain 1 every head's output has mean square ms / (ms + eps), 1 but for eps, at every query,
  // the first token's too: the variance gap the paper blames for the sink is gone.
  test::set_param(*m, "head_norm.weight", torch::ones({H, D}, f64));
  const auto unit = m->forward(in.q, in.k, in.v, in.x);
  const auto ms = o.pow(2).mean(-1);
  CATCH_CHECK(max_diff(unit.pow(2).mean(-1), ms / (ms + 1e-5)) < 1e-12);
  CATCH_CHECK(ms.max().item<double>() / ms.min().item<double>() > 10.0);  // a gap there was
}

CATCH_TEST_CASE("differential_v2: softmax(q k) - sigmoid(x W_lambda) softmax(q2 k), lambda per token and head") {
  Inputs in = draw(52);
  auto m = test::build({"differential_v2", {}}, H, D, C);
  const auto params = test::params_of(*m);
  CATCH_CHECK(params.at("q2_proj.weight").sizes() == torch::IntArrayRef{H * D, C});
  CATCH_CHECK(params.at("lambda_proj.weight").sizes() == torch::IntArrayRef{H, C});
  CATCH_CHECK(params.size() == 2);  // no bias, no norm, no lambda vectors (V1's)
  // q = q2 = x W_q2 and W_lambda = 0: both maps equal, sigmoid(0) = 1/2, a = p / 2.
  in.q = torch::matmul(in.x, params.at("q2_proj.weight").t()).view({B, T, H, D}).transpose(1, 2).detach();
  test::set_param(*m, "lambda_proj.weight", torch::zeros({H, C}, f64));
  torch::Tensor want_w, w;
  const torch::Tensor o = softmax_attention(in, &want_w);
  const auto out = m->forward(in.q, in.k, in.v, in.x, &w);
  CATCH_CHECK(max_diff(w, 0.5 * want_w) < 1e-14);
  CATCH_CHECK(max_diff(out, 0.5 * o) < 1e-12);
  // Any W_lambda: rows sum to 1 - sigmoid(x_i W_lambda), per token and head.
  const auto w_lambda = torch::randn({H, C}, f64);
  test::set_param(*m, "lambda_proj.weight", w_lambda);
  const Inputs other = draw(53);
  m->forward(other.q, other.k, other.v, other.x, &w);
  const auto lambda = torch::sigmoid(torch::matmul(other.x, w_lambda.t())).permute({0, 2, 1});  // [B, H, T]
  CATCH_CHECK(max_diff(w.sum(-1), 1.0 - lambda) < 1e-12);
  // The learned statistic is that sigmoid, per token and head.
  bool found = false;
  for (const auto& s : m->learned(other.x)) {
    if (s.name != "lambda_mean") continue;
    found = true;
    CATCH_CHECK(s.kind == LearnedStatistic::Kind::TokenMean);
    CATCH_CHECK(max_diff(s.values, lambda.permute({0, 2, 1})) < 1e-14);
  }
  CATCH_CHECK(found);
}

CATCH_TEST_CASE("vga: each key's value times sigmoid(V_j W_g + b), the gate from the values of the key/value heads") {
  const Inputs in = draw(54);
  auto m = test::build({"vga", {}}, H, D, C);
  CATCH_CHECK(test::params_of(*m).at("value_gate.weight").sizes() == torch::IntArrayRef{H, H * D});
  // W_g = 0, b = 0: every gate 1/2, the output half softmax's, the weights softmax's.
  test::set_param(*m, "value_gate.weight", torch::zeros({H, H * D}, f64));
  torch::Tensor want_w, w;
  const torch::Tensor o = softmax_attention(in, &want_w);
  CATCH_CHECK(max_diff(m->forward(in.q, in.k, in.v, in.x, &w), 0.5 * o) < 1e-12);
  CATCH_CHECK(max_diff(w, want_w) < 1e-14);
  // Any W_g, b: softmax attention over the gated values g_j v_j.
  const auto wg = torch::randn({H, H * D}, f64), bias = torch::randn({H}, f64);
  test::set_param(*m, "value_gate.weight", wg);
  test::set_param(*m, "value_gate.bias", bias);
  const auto g = torch::sigmoid(torch::matmul(in.v.transpose(1, 2).reshape({B, T, H * D}), wg.t()) + bias);
  Inputs gated = in;
  gated.v = in.v * g.permute({0, 2, 1}).unsqueeze(-1);
  CATCH_CHECK(max_diff(m->forward(in.q, in.k, in.v, in.x), softmax_attention(gated, nullptr)) < 1e-12);
  // Grouped-query attention (2 value heads for 4 query heads): the gate reads each value head once.
  auto ctx = test::context({"vga", {}}, H, D, C);
  ctx.n_kv_head = 2;
  auto grouped = make_variant(ctx);
  grouped->to(f64);
  CATCH_CHECK(test::params_of(*grouped).at("value_gate.weight").sizes() == torch::IntArrayRef{H, 2 * D});
  const auto wg2 = torch::randn({H, 2 * D}, f64);
  test::set_param(*grouped, "value_gate.weight", wg2);
  const auto v2 = torch::randn({B, 2, T, D}, f64);
  const auto v_rep = repeat_kv(v2, 2);
  const auto g2 = torch::sigmoid(torch::matmul(v2.transpose(1, 2).reshape({B, T, 2 * D}), wg2.t()));
  Inputs rep = in;
  rep.v = v_rep * g2.permute({0, 2, 1}).unsqueeze(-1);
  CATCH_CHECK(max_diff(grouped->forward(in.q, in.k, v_rep, in.x), softmax_attention(rep, nullptr)) < 1e-12);
}

}  // namespace sink_cures_2026_test
