// Properties every registered variant must have at its defaults, and the family with each of its
// options (test::registered_cases, so a new variant file is covered without a new test): causality
// on the eager and the "auto" path, weights consistent with the output. Then the family's own:
// the reductions between variants and what Elastic-Softmax keeps (docs/variants.md).
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "core/common/registry.h"
#include "tests/variants/support.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace properties_test {

using namespace attnbench;
using namespace attnbench::variants;
using config::Value;

namespace {
const auto f64 = torch::kFloat64;

// Sets every offset parameter so that t > 0: Elastic-Softmax then adds mass, and only the causal
// mask keeps it off future keys.
void make_tau_positive(torch::nn::Module& m) {
  torch::NoGradGuard no_grad;
  for (auto& p : m.named_parameters()) {
    if (p.key() == "tau" || p.key() == "tau_proj.bias") p.value().fill_(0.5);
    if (p.key() == "tau_proj.weight") p.value().fill_(0.01);
  }
}
}  // namespace

CATCH_TEST_CASE("every variant and fused kernel registered without error") {
  CATCH_INFO(join(registration_errors(), "; "));
  CATCH_CHECK(registration_errors().empty());
  CATCH_CHECK(!registered_variants().empty());
}

CATCH_TEST_CASE("changing inputs after position i never changes outputs at positions <= i") {
  // Every registered variant (test::registered_cases), on both paths: "auto" runs a fused kernel
  // where one serves the variant.
  const int64_t B = 2, H = 3, T = 8, D = 4, C = 6;
  for (const std::string backend : {"eager", "auto"}) {
    for (bool positive_tau : {false, true}) {
      for (const auto& c : test::registered_cases()) {
        CATCH_CAPTURE(c.label(), backend, positive_tau);
        torch::manual_seed(7);
        auto ctx = test::context(c, H, D, C, backend);
        auto m = test::build(c, H, D, C, backend);
        test::randomize_parameters(*m, ctx.attention.params);
        if (positive_tau) make_tau_positive(*m);
        auto q = torch::randn({B, H, T, D}, f64), k = torch::randn({B, H, T, D}, f64);
        auto v = torch::randn({B, H, T, D}, f64), x = torch::randn({B, T, C}, f64);
        auto out = m->forward(q, k, v, x);
        if (positive_tau && ctx.attention.params.count("tau_form")) {
          // Rows keep all their causal weights, which sum to more than 1 without renormalisation.
          torch::Tensor w;
          m->forward(q, k, v, x, &w);
          auto causal = torch::ones({T, T}, torch::kBool).tril();
          CATCH_CHECK(((w > 0) == causal).all().item<bool>());
        }
        for (int64_t i : {int64_t{0}, int64_t{3}, T - 2}) {
          auto later = [&](const torch::Tensor& t, int64_t dim) {
            auto c2 = t.clone();
            c2.narrow(dim, i + 1, T - i - 1).normal_(0.0, 3.0);
            return c2;
          };
          auto out2 = m->forward(later(q, 2), later(k, 2), later(v, 2), later(x, 1));
          double past = (out2 - out).narrow(2, 0, i + 1).abs().max().item<double>();
          double future = (out2 - out).narrow(2, i + 1, T - i - 1).abs().max().item<double>();
          CATCH_CHECK(past < 1e-12);
          CATCH_CHECK(future > 1e-3);  // the perturbation did reach the later positions
        }
      }
    }
  }
}

CATCH_TEST_CASE("every variant's exposed weights are causal and give its output") {
  // output == output_from_weights(weights) (weights @ v unless the variant adds a gate, a sink
  // value or a norm) wherever a variant stores weights; asking for them changes nothing.
  const int64_t B = 2, H = 3, T = 9, D = 4, C = 6;
  for (const auto& c : test::registered_cases()) {
    CATCH_CAPTURE(c.label());
    torch::manual_seed(17);
    auto ctx = test::context(c, H, D, C);
    auto m = test::build(c, H, D, C);
    test::randomize_parameters(*m, ctx.attention.params);
    auto q = torch::randn({B, H, T, D}, f64), k = torch::randn({B, H, T, D}, f64);
    auto v = torch::randn({B, H, T, D}, f64), x = torch::randn({B, T, C}, f64);
    torch::Tensor w;
    auto out = m->forward(q, k, v, x, &w);
    CATCH_CHECK((out - m->forward(q, k, v, x)).abs().max().item<double>() < 1e-12);
    if (!w.defined()) continue;  // the variant exposes no weights
    CATCH_REQUIRE(w.sizes() == torch::IntArrayRef({B, H, T, T}));
    CATCH_CHECK(w.triu(1).abs().max().item<double>() == 0.0);
    CATCH_CHECK((out - m->output_from_weights(w, v, x)).abs().max().item<double>() < 1e-12);
  }
}

CATCH_TEST_CASE("elastic with tau = 0 and no renormalisation equals softmax") {
  const int64_t B = 2, H = 4, T = 9, D = 8, C = 6;
  torch::manual_seed(3);
  auto q = torch::randn({B, H, T, D}, f64), k = torch::randn({B, H, T, D}, f64);
  auto v = torch::randn({B, H, T, D}, f64), x = torch::randn({B, T, C}, f64);
  torch::Tensor ws, we;
  auto softmax = test::build({"softmax", {}}, H, D, C);
  auto ref = softmax->forward(q, k, v, x, &ws);
  for (const std::string form : {"per_head_over_len", "per_token", "per_head_const"}) {
    CATCH_CAPTURE(form);
    auto elastic = test::build(
        {"elastic", {{"tau_init", Value{0.0}}, {"tau_form", Value{form}}}}, H, D, C);
    auto out = elastic->forward(q, k, v, x, &we);
    CATCH_CHECK((out - ref).abs().max().item<double>() < 1e-12);
    CATCH_CHECK((we - ws).abs().max().item<double>() < 1e-12);
  }
}

CATCH_TEST_CASE("with renormalize = true every row of weights sums to 1 or is all zero") {
  const int64_t B = 2, H = 3, T = 12, D = 4, C = 6;
  torch::manual_seed(5);
  // Small scores make later rows near-uniform (p about 1/n_i), so a constant offset of -0.3 zeroes
  // whole rows there while early rows keep weights: both outcomes occur.
  auto q = 0.3 * torch::randn({B, H, T, D}, f64), k = torch::randn({B, H, T, D}, f64);
  auto v = torch::randn({B, H, T, D}, f64), x = torch::randn({B, T, C}, f64);
  for (const auto& c : std::vector<test::Case>{
           {"elastic", {{"renormalize", Value{true}}, {"tau_form", Value{std::string("per_head_const")}},
                        {"tau_init", Value{-0.3}}}},
           {"lazy", {{"renormalize", Value{true}}}},
           {"elastic", {{"renormalize", Value{true}}, {"tau_form", Value{std::string("per_token")}},
                        {"tau_scale", Value{std::string("none")}}, {"tau_init", Value{-0.3}}}}}) {
    CATCH_CAPTURE(c.label());
    torch::Tensor w;
    test::build(c, H, D, C)->forward(q, k, v, x, &w);
    auto sums = w.sum(-1);
    auto all_zero = (w == 0).all(-1);
    auto one = (sums - 1).abs() < 1e-12;
    CATCH_CHECK((one | all_zero).all().item<bool>());
    CATCH_CHECK(one.any().item<bool>());
    if (c.variant != "lazy") CATCH_CHECK(all_zero.any().item<bool>());
    CATCH_CHECK((w >= 0).all().item<bool>());
  }
}

CATCH_TEST_CASE("lazy at init (tau = -1) zeroes exactly the weights <= 1/n_i") {
  const int64_t B = 2, H = 4, T = 10, D = 8, C = 6;
  torch::manual_seed(11);
  auto q = torch::randn({B, H, T, D}, f64), k = torch::randn({B, H, T, D}, f64);
  auto v = torch::randn({B, H, T, D}, f64), x = torch::randn({B, T, C}, f64);
  // At init the distance bias is 0, so rope_bias gives lazy's softmax weights p.
  torch::Tensor p, a;
  test::build({"rope_bias", {}}, H, D, C)->forward(q, k, v, x, &p);
  auto lazy = test::build({"lazy", {}}, H, D, C);
  lazy->forward(q, k, v, x, &a);
  auto Pa = p.accessor<double, 4>(), Aa = a.accessor<double, 4>();
  int64_t kept = 0, dropped = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < T; ++j) {
          const double uniform = 1.0 / static_cast<double>(i + 1);
          if (j > i) {
            CATCH_CHECK(Aa[b][h][i][j] == 0.0);
          } else if (Pa[b][h][i][j] <= uniform) {
            CATCH_CHECK(Aa[b][h][i][j] == 0.0);
            ++dropped;
          } else {
            CATCH_CHECK(std::abs(Aa[b][h][i][j] - (Pa[b][h][i][j] - uniform)) < 1e-14);
            CATCH_CHECK(Aa[b][h][i][j] > 0.0);
            ++kept;
          }
        }
  CATCH_CHECK(kept > 0);
  CATCH_CHECK(dropped > 0);

  // Exactly uniform attention (all scores equal) is dropped entirely: p = 1/n_i is not kept.
  torch::Tensor u;
  auto out = lazy->forward(torch::zeros({B, H, T, D}, f64), k, v, x, &u);
  CATCH_CHECK(u.abs().max().item<double>() == 0.0);
  CATCH_CHECK(out.abs().max().item<double>() == 0.0);
}

CATCH_TEST_CASE("bf16 inputs: the elastic threshold runs in float32, the output keeps bf16") {
  // docs/paper.md 1.3: in bf16, p + tau/i near tau = -1 rounds wrongly, so the normaliser works in
  // float32 whatever the input dtype.
  const int64_t B = 1, H = 2, T = 16, D = 8, C = 8;
  torch::manual_seed(13);
  auto bf16 = torch::kBFloat16;
  auto q = torch::randn({B, H, T, D}).to(bf16), k = torch::randn({B, H, T, D}).to(bf16);
  auto v = torch::randn({B, H, T, D}).to(bf16), x = torch::randn({B, T, C});
  auto lazy = make_variant(test::context({"lazy", {}}, H, D, C));
  torch::Tensor w;
  auto out = lazy->forward(q, k, v, x, &w);
  CATCH_CHECK(out.scalar_type() == bf16);
  CATCH_CHECK(w.scalar_type() == torch::kFloat32);
  // Exactly uniform rows (all scores equal) are dropped entirely, as in float64.
  torch::Tensor u;
  lazy->forward(torch::zeros_like(q), k, v, x, &u);
  CATCH_CHECK(u.abs().max().item<double>() == 0.0);
}

}  // namespace properties_test
