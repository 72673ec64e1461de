// Backend dispatch (DESIGN.md): eager | fused | auto, and the fallback when no fused kernel exists
// for a device.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "tests/variants/support.h"
#include "variants/eager.h"
#include "variants/family.h"

using namespace attnbench;
using namespace attnbench::variants;

namespace {
torch::Tensor never_called(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
                           const kernels::FamilySpec&) {
  throw std::logic_error("the stand-in kernel must not run");
}
}  // namespace

CATCH_TEST_CASE("backend choice: fused without a kernel is a clear error, auto falls back") {
  kernels::FusedKernel stand_in{"stand-in", never_called};
  // No kernel for the device.
  CATCH_REQUIRE_THROWS_AS(choose_fused_kernel("fused", nullptr, "cuda", false), UsageError);
  CATCH_REQUIRE_THROWS_WITH(choose_fused_kernel("fused", nullptr, "cuda", false),
                            Catch::Matchers::Contains("no fused attention kernel") &&
                                Catch::Matchers::Contains("cuda"));
  CATCH_CHECK(choose_fused_kernel("auto", nullptr, "cuda", false) == nullptr);
  CATCH_CHECK(choose_fused_kernel("eager", nullptr, "cuda", false) == nullptr);
  // A kernel exists.
  CATCH_CHECK(choose_fused_kernel("fused", &stand_in, "cpu", false) == &stand_in);
  CATCH_CHECK(choose_fused_kernel("auto", &stand_in, "cpu", false) == &stand_in);
  CATCH_CHECK(choose_fused_kernel("eager", &stand_in, "cpu", false) == nullptr);
  // Requested weights always take eager, even under "fused".
  CATCH_CHECK(choose_fused_kernel("auto", &stand_in, "cpu", true) == nullptr);
  CATCH_CHECK(choose_fused_kernel("fused", &stand_in, "cpu", true) == nullptr);
  CATCH_CHECK(choose_fused_kernel("fused", nullptr, "cpu", true) == nullptr);
}

CATCH_TEST_CASE("a variant on CPU runs the registered fused kernel, or eager/an error without one") {
  const int64_t B = 1, H = 2, T = 16, D = 8, C = 8;
  torch::manual_seed(1);
  auto q = torch::randn({B, H, T, D}), k = torch::randn({B, H, T, D});
  auto v = torch::randn({B, H, T, D}), x = torch::randn({B, T, C});
  const test::Case lazy{"lazy", {}};
  auto eager = make_variant(test::context(lazy, H, D, C, "eager"));
  auto reference = eager->forward(q, k, v, x);
  auto fused = make_variant(test::context(lazy, H, D, C, "fused"));
  auto automatic = make_variant(test::context(lazy, H, D, C, "auto"));
  if (kernels::find_fused_kernel(torch::kCPU) == nullptr) {
    CATCH_REQUIRE_THROWS_WITH(fused->forward(q, k, v, x),
                              Catch::Matchers::Contains("no fused attention kernel is registered "
                                                        "for device cpu"));
    CATCH_CHECK(torch::equal(automatic->forward(q, k, v, x), reference));
  } else {
    // The kernel's own accuracy is tested in tests/kernels; here: "fused" and "auto" both run it
    // (its autograd node, not eager's), and it computes the same attention.
    auto qg = q.clone().requires_grad_(true);
    auto by_fused = fused->forward(qg, k, v, x), by_auto = automatic->forward(qg, k, v, x);
    auto by_eager = eager->forward(qg, k, v, x);
    CATCH_CHECK(by_fused.grad_fn()->name() == by_auto.grad_fn()->name());
    CATCH_CHECK(by_fused.grad_fn()->name() != by_eager.grad_fn()->name());
    CATCH_CHECK((by_fused - reference).abs().max().item<double>() < 1e-4);
    CATCH_CHECK((by_auto - reference).abs().max().item<double>() < 1e-4);
  }
  // Weights requested: eager even under "fused", with identical results.
  torch::Tensor w;
  CATCH_CHECK(torch::equal(fused->forward(q, k, v, x, &w), reference));
  CATCH_CHECK(w.sizes() == torch::IntArrayRef({B, H, T, T}));
}

CATCH_TEST_CASE("a device without a fused kernel: fused is a clear error") {
  // No fused kernel exists for the meta device (shapes only, no data), whatever kernels/ provides.
  CATCH_REQUIRE(kernels::find_fused_kernel(torch::kMeta) == nullptr);
  const test::Case plain{"softmax", {{"position", config::Value{std::string("none")}}}};
  auto meta = torch::TensorOptions().device(torch::kMeta);
  auto q = torch::empty({1, 2, 5, 4}, meta), x = torch::empty({1, 5, 8}, meta);
  auto fused = make_variant(test::context(plain, 2, 4, 8, "fused"));
  CATCH_REQUIRE_THROWS_WITH(fused->forward(q, q, q, x),
                            Catch::Matchers::Contains("no fused attention kernel is registered "
                                                      "for device meta"));
}

CATCH_TEST_CASE("an unknown backend is rejected when the variant is built") {
  CATCH_REQUIRE_THROWS_WITH(make_variant(test::context({"softmax", {}}, 2, 4, 8, "fusde")),
                            Catch::Matchers::Contains("did you mean 'fused'"));
}
