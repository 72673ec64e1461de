// The defining properties of two sink cures (docs/variants.md, "Sink cures"), in float64: softpick
// (variants/softpick.cpp) zeroes every weight whose score is <= 0 and its rows sum to at most 1,
// stably where e^s overflows; kv_bias (variants/kv_bias.cpp) is a softmax with one more key k'
// and value v' per head. Registry-wide properties (causality, gradients, weights consistent with
// the output) are in properties_test.cpp and gradient_test.cpp.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <cmath>

#include "tests/variants/support.h"
#include "variants/position.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace softpick_kv_bias_test {

using namespace attnbench;
using namespace attnbench::variants;
using config::Value;

namespace {
const auto f64 = torch::kFloat64;
const double kSoftpickEps = 1e-8;  // variants/softpick.cpp: the reference's eps

const test::Case kNoPosition{"softpick", {{"position", Value{std::string("none")}}}};

torch::Tensor future_mask(int64_t T) { return torch::ones({T, T}, torch::kBool).triu(1); }

// s_ij = (R_i q_i) . (R_j k_j) / sqrt(D) with RoPE at theta = 10000 (the default), or without.
torch::Tensor scores(const torch::Tensor& q, const torch::Tensor& k, bool rope) {
  const auto qr = rope ? apply_rope(q, {10000.0}) : q, kr = rope ? apply_rope(k, {10000.0}) : k;
  return torch::matmul(qr, kr.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(3)));
}

// Softpick as the paper writes it, without rescaling: overflows once a score passes ~709. The eps
// stands where the reference's rescaled form puts it: eps * e^{max(m, 0)}, m the row's maximum.
torch::Tensor direct_softpick(const torch::Tensor& s) {
  const auto future = future_mask(s.size(-1));
  const auto e = (torch::exp(s) - 1).masked_fill(future, 0.0);
  const auto m = s.masked_fill(future, -INFINITY).amax(-1, true).clamp_min(0.0);
  return torch::relu(e) / (e.abs().sum(-1, true) + kSoftpickEps * torch::exp(m));
}

// The reference's rescaling by its row maximum m, unclamped (zaydzuhri/softpick-attention).
torch::Tensor reference_softpick(const torch::Tensor& s) {
  const auto future = future_mask(s.size(-1));
  const auto x = s.masked_fill(future, -INFINITY);
  const auto m = x.amax(-1, true);
  const auto e = (torch::exp(x - m) - torch::exp(-m)).masked_fill(future, 0.0);
  return torch::relu(e) / (e.abs().sum(-1, true) + kSoftpickEps);
}

bool finite(const torch::Tensor& t) { return torch::isfinite(t).all().item<bool>(); }
}  // namespace

CATCH_TEST_CASE("softpick: exact zeros where s_ij <= 0, positive weights where s_ij > 0") {
  const int64_t B = 2, H = 3, T = 8, D = 4, C = 6;
  {  // Hand-built scores of row 3 (no position part): s = 1, 0, -0.5, 0.25.
    auto m = test::build(kNoPosition, 1, D, C);
    auto q = torch::zeros({1, 1, 4, D}, f64), k = torch::zeros({1, 1, 4, D}, f64);
    q.select(3, 0).fill_(1.0);
    k[0][0][0][0] = 2.0;   // s = 2 / sqrt(4) = 1
    k[0][0][1][1] = 1.0;   // orthogonal to q: s = 0 exactly
    k[0][0][2][0] = -1.0;  // s = -0.5
    k[0][0][3][0] = 0.5;   // s = 0.25
    torch::Tensor w;
    m->forward(q, k, torch::randn({1, 1, 4, D}, f64), torch::zeros({1, 4, C}, f64), &w);
    const double e1 = std::exp(1.0) - 1, e4 = std::exp(0.25) - 1;
    const double sum = e1 + 0.0 + (1 - std::exp(-0.5)) + e4 + kSoftpickEps * std::exp(1.0);
    auto row = w[0][0][3];
    CATCH_CHECK(std::abs(row[0].item<double>() - e1 / sum) < 1e-14);
    CATCH_CHECK(row[1].item<double>() == 0.0);
    CATCH_CHECK(row[2].item<double>() == 0.0);
    CATCH_CHECK(std::abs(row[3].item<double>() - e4 / sum) < 1e-14);
  }
  // Random scores after RoPE (the default position): the sign of s_ij decides.
  torch::manual_seed(21);
  auto q = torch::randn({B, H, T, D}, f64), k = torch::randn({B, H, T, D}, f64);
  torch::Tensor w;
  test::build({"softpick", {}}, H, D, C)
      ->forward(q, k, torch::randn({B, H, T, D}, f64), torch::randn({B, T, C}, f64), &w);
  const auto s = scores(q, k, /*rope=*/true);
  const auto visible = future_mask(T).logical_not();
  CATCH_CHECK(w.masked_select(future_mask(T)).abs().max().item<double>() == 0.0);
  const auto positive = (s > 0) & visible, non_positive = (s <= 0) & visible;
  CATCH_CHECK(w.masked_select(non_positive).abs().max().item<double>() == 0.0);
  CATCH_CHECK(w.masked_select(positive).min().item<double>() > 0.0);
  CATCH_CHECK(positive.sum().item<int64_t>() > 20);
  CATCH_CHECK(non_positive.sum().item<int64_t>() > 20);
}

CATCH_TEST_CASE("softpick: rows sum to at most 1, below 1 when a visible score is negative") {
  const int64_t B = 2, H = 3, T = 10, D = 4, C = 6;
  torch::manual_seed(22);
  auto q = torch::randn({B, H, T, D}, f64), k = torch::randn({B, H, T, D}, f64);
  // The last head sees only positive scores: every q and k in the positive orthant, no RoPE.
  q.select(1, H - 1).abs_();
  k.select(1, H - 1).abs_();
  torch::Tensor w;
  test::build(kNoPosition, H, D, C)
      ->forward(q, k, torch::randn({B, H, T, D}, f64), torch::randn({B, T, C}, f64), &w);
  const auto s = scores(q, k, /*rope=*/false);
  const auto future = future_mask(T);
  const auto has_negative = (s.masked_fill(future, 1.0) < 0).any(-1);
  const auto all_non_positive = (s.masked_fill(future, -1.0) <= 0).all(-1);
  const auto sums = w.sum(-1);
  CATCH_CHECK((sums <= 1.0).all().item<bool>());
  // A row sums to P / (P + N + eps) with N >= 1 - e^{s_min} (its most negative score) and
  // P + N + eps <= sum_j (e^{s_j} + 1) + eps < 2 (T + sum_j e^{s_j}): a margin below 1.
  const auto s_vis = s.masked_fill(future, 0.0);
  const auto bound = 1.0 - 0.5 * (1.0 - torch::exp(s_vis.amin(-1))) /
                               (static_cast<double>(T) + torch::exp(s_vis).sum(-1));
  CATCH_CHECK((sums.masked_select(has_negative) < bound.masked_select(has_negative)).all()
                  .item<bool>());
  CATCH_CHECK(has_negative.sum().item<int64_t>() > 10);
  // A row without a negative score sums to 1 up to eps; one without a positive score to 0.
  CATCH_CHECK((sums.masked_select(has_negative.logical_not()) - 1).abs().max().item<double>() <
              1e-7);
  CATCH_CHECK(has_negative.logical_not().sum().item<int64_t>() >= B * T);
  CATCH_CHECK(sums.masked_select(all_non_positive).abs().max().item<double>() == 0.0);
  CATCH_CHECK(all_non_positive.any().item<bool>());
}

CATCH_TEST_CASE("softpick: the stable form equals the direct formula, finite at |s| ~ 1e3") {
  const int64_t T = 6, D = 4, C = 6;
  auto m = test::build(kNoPosition, 2, D, C);
  {  // Moderate scores, up to about +-6: the direct formula is exact enough to compare with.
    torch::manual_seed(23);
    auto q = 2 * torch::randn({2, 2, T, D}, f64), k = torch::randn({2, 2, T, D}, f64);
    torch::Tensor w;
    m->forward(q, k, torch::randn({2, 2, T, D}, f64), torch::zeros({2, T, C}, f64), &w);
    const auto direct = direct_softpick(scores(q, k, false));
    CATCH_CHECK((w - direct).abs().max().item<double>() < 1e-13);
    CATCH_CHECK(direct.sum(-1).max().item<double>() > 0.5);  // rows with weight to compare
  }
  // s_ij = k_j[0] (q = 2 e_0, D = 4). Head 0 mixes +-1e3 in every row after the first; head 1 sees
  // only scores near -1e3, where the reference's e^{-m} = e^{1000} overflows.
  auto q = torch::zeros({1, 2, T, D}, f64), k = torch::zeros({1, 2, T, D}, f64);
  q.select(3, 0).fill_(2.0);
  k[0][0].select(1, 0).copy_(torch::tensor({1000.0, -1000.0, 990.0, -1010.0, 1005.0, -995.0}, f64));
  k[0][1].select(1, 0).copy_(torch::tensor({-1000.0, -990.0, -1010.0, -1005.0, -995.0, -1e3}, f64));
  CATCH_CHECK(!finite(direct_softpick(scores(q, k, false))));  // e^{1000} = inf
  auto v = torch::randn({1, 2, T, D}, f64);
  for (auto* t : {&q, &k, &v}) t->requires_grad_(true);
  torch::Tensor w;
  auto out = m->forward(q, k, v, torch::zeros({1, T, C}, f64), &w);
  CATCH_CHECK(finite(w));
  CATCH_CHECK(finite(out));
  // Head 0: each row puts (almost) all its weight on its keys at +1e3; head 1 attends to nothing.
  CATCH_CHECK((w[0][0].sum(-1) - 1).abs().max().item<double>() < 1e-7);
  CATCH_CHECK(w[0][1].abs().max().item<double>() == 0.0);
  (out * torch::randn_like(out)).sum().backward();
  for (auto* t : {&q, &k, &v}) CATCH_CHECK(finite(t->grad()));
  CATCH_CHECK(v.grad()[0][0].abs().max().item<double>() > 0.0);

  // The reference's own rescaling (c = m) gives the same weights but NaN gradients on head 1.
  auto s = scores(q.detach(), k.detach(), false).requires_grad_(true);
  auto ref = reference_softpick(s);
  CATCH_CHECK((ref.detach() - w.detach()).abs().max().item<double>() < 1e-15);
  ref.sum().backward();
  CATCH_CHECK(!finite(s.grad()[0][1]));
}

CATCH_TEST_CASE("kv_bias: with v' = 0 and a very negative sink logit it is causal softmax") {
  const int64_t B = 2, H = 3, T = 7, D = 4, C = 6;
  torch::manual_seed(31);
  auto m = test::build({"kv_bias", {{"position", Value{std::string("none")}}}}, H, D, C);
  {
    torch::NoGradGuard no_grad;
    auto p = test::params_of(*m);
    p.at("v_bias").zero_();
    p.at("k_bias").zero_();
    p.at("k_bias").select(1, 0).fill_(-1e4);  // sigma_i = -1e4 q_i[0] / 2 <= -5e3
  }
  auto q = torch::randn({B, H, T, D}, f64), k = torch::randn({B, H, T, D}, f64);
  q.select(3, 0).abs_().add_(1.0);
  auto v = torch::randn({B, H, T, D}, f64);
  torch::Tensor w;
  auto out = m->forward(q, k, v, torch::randn({B, T, C}, f64), &w);
  const auto softmax =
      torch::softmax(scores(q, k, false).masked_fill(future_mask(T), -INFINITY), -1);
  CATCH_CHECK((w - softmax).abs().max().item<double>() < 1e-12);
  CATCH_CHECK((out - torch::matmul(softmax, v)).abs().max().item<double>() < 1e-12);
  // With a moderate sink logit the output differs: the comparison above can fail.
  {
    torch::NoGradGuard no_grad;
    test::params_of(*m).at("k_bias").select(1, 0).fill_(1.0);
  }
  CATCH_CHECK((m->forward(q, k, v, torch::randn({B, T, C}, f64)) - torch::matmul(softmax, v))
                  .abs().max().item<double>() > 1e-3);
}

CATCH_TEST_CASE("kv_bias: softmax over the keys and the sink (k' unrotated), weights + sink = 1") {
  const int64_t B = 2, H = 3, T = 7, D = 4, C = 6;
  torch::manual_seed(32);
  auto m = test::build({"kv_bias", {}}, H, D, C);  // RoPE
  test::randomize_parameters(*m, config::resolve_params("kv_bias", {}));
  auto p = test::params_of(*m);
  auto q = torch::randn({B, H, T, D}, f64), k = torch::randn({B, H, T, D}, f64);
  auto v = torch::randn({B, H, T, D}, f64);
  torch::Tensor w;
  auto out = m->forward(q, k, v, torch::randn({B, T, C}, f64), &w);
  // The reference: sigma_i = (R_i q_i) . k' / sqrt(D), one more column of the softmax.
  const auto kb = p.at("k_bias").detach(), vb = p.at("v_bias").detach();
  const auto sigma = torch::matmul(apply_rope(q, {10000.0}), kb.view({1, H, D, 1})) / 2.0;
  const auto s = scores(q, k, true).masked_fill(future_mask(T), -INFINITY);
  const auto a = torch::softmax(torch::cat({s, sigma}, -1), -1);
  const auto sink = a.narrow(-1, T, 1);
  CATCH_CHECK((w - a.narrow(-1, 0, T)).abs().max().item<double>() < 1e-12);
  CATCH_CHECK((out - (torch::matmul(w, v) + sink * vb.view({1, H, 1, D}))).abs().max()
                  .item<double>() < 1e-12);
  CATCH_CHECK((w.sum(-1, true) + sink - 1).abs().max().item<double>() < 1e-12);
  CATCH_CHECK(sink.min().item<double>() > 1e-4);  // the sink takes a share of every row
}

CATCH_TEST_CASE("kv_bias: 2 H D parameters k_bias, v_bias [H, D], learned, not decayed, reached "
                "by gradients") {
  const int64_t H = 8, D = 64, C = 512;
  const test::Case c{"kv_bias", {}};
  auto ctx = test::context(c, H, D, C);
  CATCH_CHECK(variant_parameter_count(ctx) == 2 * H * D);
  const config::ParamMap distance_bias = {{"position", Value{std::string("rope+distance_bias")}},
                                           {"bias_window", Value{int64_t{5}}}};
  auto with_bias = test::context({"kv_bias", distance_bias}, H, D, C);
  CATCH_CHECK(variant_parameter_count(with_bias) == 2 * H * D + H * 5);

  auto m = make_variant(ctx);
  auto p = test::params_of(*m);
  CATCH_REQUIRE(p.size() == 2);
  for (const char* name : {"k_bias", "v_bias"}) {
    CATCH_CAPTURE(name);
    const auto& t = p.at(name);
    CATCH_CHECK(t.sizes() == torch::IntArrayRef({H, D}));
    CATCH_CHECK(t.scalar_type() == torch::kFloat32);
    CATCH_CHECK(std::abs(t.std().item<double>() - ctx.init_std) < 0.2 * ctx.init_std);
    CATCH_CHECK_FALSE(variant_parameter_decays(*m, name, t));  // biases never decay
  }
  auto learned = m->learned(torch::zeros({1, 4, C}));
  CATCH_REQUIRE(learned.size() == 2);
  CATCH_CHECK(learned[0].name == "k_bias_norm");
  CATCH_CHECK((learned[0].values - p.at("k_bias").norm(2, {1})).abs().max().item<float>() == 0.0f);
  CATCH_CHECK(learned[1].name == "v_bias_norm");

  // Gradients reach k' (through the sink logit) and v' (through the sink's share of the output).
  auto small = test::build(c, 2, 4, 6);
  auto q = torch::randn({1, 2, 5, 4}, f64), k = torch::randn({1, 2, 5, 4}, f64);
  auto out = small->forward(q, k, torch::randn({1, 2, 5, 4}, f64), torch::zeros({1, 5, 6}, f64));
  (out * torch::randn_like(out)).sum().backward();
  for (auto& [name, t] : test::params_of(*small)) {
    CATCH_CAPTURE(name);
    CATCH_REQUIRE(t.grad().defined());
    CATCH_CHECK(t.grad().abs().min().item<double>() > 0.0);
  }
}

CATCH_TEST_CASE("softpick has no parameters of its own and learns only its position part") {
  const int64_t H = 4, D = 8, C = 32;
  auto ctx = test::context({"softpick", {}}, H, D, C);
  CATCH_CHECK(variant_parameter_count(ctx) == 0);
  CATCH_CHECK(test::params_of(*make_variant(ctx)).empty());
  const config::ParamMap distance_bias = {{"position", Value{std::string("rope+distance_bias")}},
                                           {"bias_window", Value{int64_t{6}}}};
  auto lazy_like = test::context({"softpick", distance_bias}, H, D, C);
  CATCH_CHECK(variant_parameter_count(lazy_like) == H * 6);
  auto learned = make_variant(lazy_like)->learned(torch::zeros({1, 4, C}));
  CATCH_REQUIRE(learned.size() == 1);
  CATCH_CHECK(learned[0].name == "distance_bias");
  CATCH_CHECK(learned[0].values.sizes() == torch::IntArrayRef({H, 4}));
}

}  // namespace softpick_kv_bias_test
