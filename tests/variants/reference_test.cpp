// Each variant's eager output and weights equal the independent loop implementation of its formula
// (tests/variants/loop_reference.h) on random inputs in float64, to 1e-10.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "tests/variants/loop_reference.h"
#include "tests/variants/support.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace reference_test {

using namespace attnbench;
using namespace attnbench::variants;

CATCH_TEST_CASE("eager output equals the loop implementation for every family option") {
  const int64_t B = 2, T = 7, D = 4, C = 6;
  int64_t seed = 0;
  for (int64_t H : {3, 4}) {  // 3 heads: ALiBi's rule for head counts that are not powers of two
    for (const auto& c : test::all_cases()) {
      CATCH_CAPTURE(c.label(), H);
      torch::manual_seed(++seed);
      auto ctx = test::context(c, H, D, C);
      auto m = test::build(c, H, D, C);
      test::randomize_parameters(*m, ctx.attention.params);
      auto f64 = torch::kFloat64;
      auto q = torch::randn({B, H, T, D}, f64), k = torch::randn({B, H, T, D}, f64);
      auto v = torch::randn({B, H, T, D}, f64), x = torch::randn({B, T, C}, f64);

      torch::Tensor weights;
      auto out = m->forward(q, k, v, x, &weights);
      auto plain = m->forward(q, k, v, x);  // without weights requested
      auto ref = test::loop_reference(q, k, v, x, ctx.attention.params, test::params_of(*m));

      CATCH_REQUIRE(out.sizes() == torch::IntArrayRef({B, H, T, D}));
      CATCH_REQUIRE(out.scalar_type() == torch::kFloat64);
      CATCH_CHECK((out - ref.out).abs().max().item<double>() < 1e-10);
      CATCH_CHECK((plain - ref.out).abs().max().item<double>() < 1e-10);
      CATCH_REQUIRE(weights.sizes() == torch::IntArrayRef({B, H, T, T}));
      CATCH_CHECK((weights - ref.weights).abs().max().item<double>() < 1e-10);
      // The case is informative: the output is not trivially zero.
      CATCH_CHECK(ref.out.abs().max().item<double>() > 1e-3);
      if (ctx.attention.params.count("tau_form")) {  // the threshold both zeroes and keeps weights
        auto causal = torch::ones({T, T}, torch::kBool).tril();
        auto zeros = ((ref.weights == 0) & causal).sum().item<int64_t>();
        CATCH_CHECK(zeros > 0);
        CATCH_CHECK(zeros < B * H * T * (T + 1) / 2);
      }
    }
  }
}

}  // namespace reference_test
