// Autograd through every registered variant (eager path) agrees with central finite differences in
// float64, for q, k, v, x and every learnable parameter: each variant at its defaults and the
// family with each option (test::registered_cases), so a new variant file is covered as it is.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "tests/variants/loop_reference.h"
#include "tests/variants/support.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace gradient_test {

using namespace attnbench;
using namespace attnbench::variants;

CATCH_TEST_CASE("gradients match central finite differences for every registered variant") {
  const int64_t B = 2, H = 3, T = 6, D = 4, C = 5;
  const double eps = 1e-6;
  auto f64 = torch::kFloat64;
  for (const auto& c : test::registered_cases()) {
    CATCH_CAPTURE(c.label());
    auto ctx = test::context(c, H, D, C);
    auto m = test::build(c, H, D, C);
    // Elastic-Softmax's ReLU has a kink at p + t = 0: draw inputs until every causal p + t is at
    // least 1e-4 away from it, far beyond what a perturbation of 1e-6 moves.
    const bool has_kink = ctx.attention.params.count("tau_form") > 0;
    torch::Tensor q, k, v, x;
    for (int64_t seed = 100;; ++seed) {
      torch::manual_seed(seed);
      test::randomize_parameters(*m, ctx.attention.params);
      q = torch::randn({B, H, T, D}, f64);
      k = torch::randn({B, H, T, D}, f64);
      v = torch::randn({B, H, T, D}, f64);
      x = torch::randn({B, T, C}, f64);
      if (!has_kink ||
          test::loop_reference(q, k, v, x, ctx.attention.params, test::params_of(*m)).margin > 1e-4)
        break;
      CATCH_REQUIRE(seed < 200);
    }
    auto cotangent = torch::randn({B, H, T, D}, f64);
    std::vector<std::pair<std::string, torch::Tensor>> inputs = {
        {"q", q}, {"k", k}, {"v", v}, {"x", x}};
    for (auto& [name, p] : test::params_of(*m)) inputs.emplace_back(name, p);
    for (auto& in : inputs) in.second.requires_grad_(true);

    auto loss = [&] { return (m->forward(q, k, v, x) * cotangent).sum(); };
    loss().backward();
    for (auto& [name, t] : inputs) {
      CATCH_CAPTURE(name);
      auto analytic = t.grad().defined() ? t.grad().clone() : torch::zeros_like(t);
      auto numeric = torch::zeros_like(t);
      {
        torch::NoGradGuard no_grad;
        auto flat = t.view({-1}), num = numeric.view({-1});
        for (int64_t e = 0; e < flat.numel(); ++e) {
          double orig = flat[e].item<double>();
          flat[e] = orig + eps;
          double up = loss().item<double>();
          flat[e] = orig - eps;
          double down = loss().item<double>();
          flat[e] = orig;
          num[e] = (up - down) / (2 * eps);
        }
      }
      double err = (analytic - numeric).abs().max().item<double>();
      double scale = 1.0 + numeric.abs().max().item<double>();
      CATCH_CHECK(err < 1e-6 * scale);
    }
    // Every learnable parameter is reached by the gradient (none is silently detached).
    for (auto& [name, p] : test::params_of(*m)) {
      CATCH_CAPTURE(name);
      CATCH_CHECK(p.grad().defined());
      if (p.grad().defined()) CATCH_CHECK(p.grad().abs().max().item<double>() > 0);
    }
  }
}

}  // namespace gradient_test
