// The registered CUDA kernel "cuda" (kernels/cuda/cuda_kernel.cpp; docs/kernels.md, "CUDA") on its
// SDPA route against the eager reference on the GPU (gpu tag): every route (no bias, T % 128 == 64, ALiBi,
// distance bias, both) in float32 and bfloat16, output and the gradients of q, k, v and the
// distance-bias table. An executable of its own (tests/CMakeLists.txt, attnbench_gpu_test) that
// exits 77, which CTest reports as Skipped, where no CUDA device is usable.
#include "kernels/sdpa.h"

#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/attention_family.h"
#include "tests/kernels/sdpa_support.h"
#include "variants/eager.h"
#include "variants/position.h"

// After every torch header (docs/toolchain.md, "Catch2 and glog's CHECK").
#include <catch2/catch.hpp>

namespace {

using attnbench::kernels::FamilySpec;
using attnbench::kernels::Normalizer;
using attnbench::kernels::SdpaRoute;
using Catch::Matchers::Contains;
using attnbench::test::relative;
using attnbench::test::spec_for;


}  // namespace

CATCH_TEST_CASE("the registered CUDA kernel equals eager, output and gradients", "[gpu]") {
  const auto* kernel = attnbench::kernels::find_fused_kernel(torch::kCUDA);
  CATCH_REQUIRE(kernel != nullptr);  // a CUDA device but no kernel: the CUDA build lost it
  CATCH_CHECK(kernel->name == "cuda");
  const int64_t B = 2, H = 4, D = 32, W = 100;
  torch::Device cuda(torch::kCUDA);
  // T: a tile multiple, T % 128 == 64 (the guarded route), not a multiple of 16 (padded bias).
  for (const std::string position : {"none", "alibi", "distance_bias", "alibi+distance_bias"}) {
    for (const auto dtype : {torch::kFloat32, torch::kBFloat16}) {
      for (const int64_t T : {256, 192, 70}) {
        CATCH_CAPTURE(position, c10::toString(dtype), T);
        torch::manual_seed(11);
        auto f64 = torch::kFloat64;
        auto q = torch::randn({B, H, T, D}, f64), k = torch::randn({B, H, T, D}, f64);
        auto v = torch::randn({B, H, T, D}, f64), g = torch::randn({B, H, T, D}, f64);
        FamilySpec want_spec = spec_for(position, H, W, f64);
        // The same parameters on the GPU; distance bias float32 as the variants keep it.
        FamilySpec spec;
        if (want_spec.alibi_slopes.defined()) spec.alibi_slopes = want_spec.alibi_slopes.to(cuda);
        if (want_spec.distance_bias.defined()) {
          spec.distance_bias =
              want_spec.distance_bias.detach().to(cuda, torch::kFloat32).requires_grad_(true);
        }
        auto leaf = [&](const torch::Tensor& t) {
          return t.to(cuda, dtype).detach().requires_grad_(true);
        };
        auto qc = leaf(q), kc = leaf(k), vc = leaf(v);
        CATCH_REQUIRE(kernel->unsupported(qc, kc, vc, spec) == "");
        auto out = kernel->forward(qc, kc, vc, spec);
        (out.to(torch::kFloat32) * g.to(cuda, torch::kFloat32)).sum().backward();
        for (auto* t : {&q, &k, &v}) t->requires_grad_(true);
        auto want = attnbench::variants::eager_family_attention(q, k, v, want_spec);
        (want * g).sum().backward();
        const double tol = dtype == torch::kFloat32 ? 2e-3 : 5e-2;
        CATCH_CHECK(!torch::isnan(out).any().item<bool>());
        CATCH_CHECK(relative(out, want) < tol);
        CATCH_CHECK(relative(qc.grad(), q.grad()) < tol);
        CATCH_CHECK(relative(kc.grad(), k.grad()) < tol);
        CATCH_CHECK(relative(vc.grad(), v.grad()) < tol);
        if (spec.distance_bias.defined()) {
          CATCH_CHECK(relative(spec.distance_bias.grad(), want_spec.distance_bias.grad()) < tol);
        }
      }
    }
  }
  // Elastic goes to the fused CUDA kernels (tests/kernels/family_cuda_gpu_test.cpp), which take
  // D 64 or 128 only, and which "auto" does not pick until they are validated.
  FamilySpec elastic;
  elastic.normalizer = Normalizer::Elastic;
  elastic.tau = torch::full({H}, -1.0, torch::TensorOptions().device(cuda));
  auto qc = torch::randn({B, H, 64, D}, torch::TensorOptions().device(cuda));
  CATCH_CHECK_THAT(kernel->unsupported(qc, qc, qc, elastic), Contains("head dimension 64 or 128"));
  auto q64 = torch::randn({B, H, 64, 64}, torch::TensorOptions().device(cuda));
  CATCH_CHECK(kernel->unsupported(q64, q64, q64, elastic) == "");
  CATCH_CHECK_THAT(kernel->unvalidated(q64, q64, q64, elastic), Contains("not yet passed"));
  CATCH_CHECK(kernel->unvalidated(q64, q64, q64, FamilySpec{}) == "");
  CATCH_CHECK_THAT(kernel->unsupported(qc.cpu(), qc.cpu(), qc.cpu(), FamilySpec{}),
                   Contains("CUDA tensors expected"));
}
