// The SDPA route of the family (kernels/sdpa.h, kernels/cuda/sdpa_kernel.cpp; docs/kernels.md,
// "CUDA"). On the CPU, in every build: the score bias handed to SDPA is the eager reference's
// (output and distance-bias gradient through softmax(q k^T / sqrt(D) + bias) v), its layout meets
// the memory-efficient kernel's alignment, routes and limits. The registered CUDA kernel itself is
// tested on a GPU by tests/kernels/sdpa_gpu_test.cpp.
#include "kernels/sdpa.h"

#include <torch/torch.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/attention_family.h"
#include "tests/kernels/sdpa_support.h"
#include "variants/eager.h"
#include "variants/position.h"

// After every torch header (docs/toolchain.md, "Catch2 and glog's CHECK").
#include <catch2/catch.hpp>

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace sdpa_test {

namespace {

using attnbench::kernels::FamilySpec;
using attnbench::kernels::Normalizer;
using attnbench::kernels::SdpaRoute;
using Catch::Matchers::Contains;
using attnbench::test::relative;
using attnbench::test::spec_for;


// What the memory-efficient kernel computes with is_causal and the bias, in plain torch ops.
torch::Tensor with_bias(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor& bias) {
  const int64_t T = q.size(2);
  auto s = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(3)));
  auto causal = torch::ones({T, T}, torch::kBool).tril();
  s = (s + bias).masked_fill(causal.logical_not(), -INFINITY);
  return torch::matmul(torch::softmax(s, -1), v);
}

}  // namespace

CATCH_TEST_CASE("the SDPA score bias equals the eager reference's, gradient included") {
  const int64_t B = 2, H = 3, D = 8;
  for (const std::string position : {"alibi", "distance_bias", "alibi+distance_bias"}) {
    for (const int64_t T : {1, 5, 70}) {
      for (const int64_t W : {3, 100}) {  // distances beyond the window, and a window beyond T
        CATCH_CAPTURE(position, T, W);
        torch::manual_seed(7);
        auto f64 = torch::kFloat64;
        auto q = torch::randn({B, H, T, D}, f64), k = torch::randn({B, H, T, D}, f64);
        auto v = torch::randn({B, H, T, D}, f64), g = torch::randn({B, H, T, D}, f64);
        FamilySpec spec = spec_for(position, H, W, f64);
        auto bias = attnbench::kernels::sdpa_score_bias(spec, T, f64, torch::kCPU);
        CATCH_CHECK(bias.sizes() == torch::IntArrayRef({1, H, T, T}));
        CATCH_CHECK(bias.scalar_type() == f64);
        CATCH_CHECK(bias.stride(3) == 1);
        CATCH_CHECK(bias.stride(2) % 16 == 0);  // the kernel's strideM alignment
        auto got = with_bias(q, k, v, bias.expand({B, H, T, T}));
        auto want = attnbench::variants::eager_family_attention(q, k, v, spec);
        CATCH_CHECK(relative(got, want) < 1e-12);
        if (spec.distance_bias.defined()) {
          auto db = spec.distance_bias;
          auto dgot = torch::autograd::grad({(got * g).sum()}, {db})[0];
          auto dwant = torch::autograd::grad({(want * g).sum()}, {db})[0];
          CATCH_CHECK(relative(dgot, dwant) < 1e-10);
        }
        if (position == "alibi") CATCH_CHECK(!bias.requires_grad());  // constants: no bias grad
      }
    }
  }
}

CATCH_TEST_CASE("the SDPA bias in 16-bit types is cast from float32 once") {
  const int64_t H = 4, T = 33;
  FamilySpec spec = spec_for("alibi+distance_bias", H, 8, torch::kFloat32);
  auto b16 = attnbench::kernels::sdpa_score_bias(spec, T, torch::kBFloat16, torch::kCPU);
  auto b32 = attnbench::kernels::sdpa_score_bias(spec, T, torch::kFloat32, torch::kCPU);
  CATCH_CHECK(b16.scalar_type() == torch::kBFloat16);
  CATCH_CHECK(b16.stride(2) % 16 == 0);
  CATCH_CHECK(torch::equal(b16, b32.to(torch::kBFloat16)));
  // The table's gradient is float32 (accumulated before the cast), as its parameter.
  auto grad = torch::autograd::grad({b16.to(torch::kFloat32).sum()}, {spec.distance_bias})[0];
  CATCH_CHECK(grad.scalar_type() == torch::kFloat32);
  // Distance d < W occurs on T - d entries of the diagonal, all of them causal.
  for (int64_t d = 0; d < 8; ++d) CATCH_CHECK(grad[0][d].item<double>() == double(T - d));
}

CATCH_TEST_CASE("SDPA routes: causal without a bias, the memory-efficient kernel with one") {
  using attnbench::kernels::sdpa_route;
  FamilySpec plain;
  CATCH_CHECK(sdpa_route(plain, 256) == SdpaRoute::Causal);
  CATCH_CHECK(sdpa_route(plain, 1024) == SdpaRoute::Causal);
  CATCH_CHECK(sdpa_route(plain, 4096) == SdpaRoute::Causal);
  // T % 128 == 64: never cuDNN (pytorch/pytorch#196678)
  for (int64_t T : {64, 192, 1088}) CATCH_CHECK(sdpa_route(plain, T) == SdpaRoute::CausalMemEfficient);
  for (const std::string position : {"alibi", "distance_bias", "alibi+distance_bias"}) {
    FamilySpec s = spec_for(position, 4, 8, torch::kFloat32);
    for (int64_t T : {64, 256, 4096}) CATCH_CHECK(sdpa_route(s, T) == SdpaRoute::BiasMemEfficient);
  }
}

CATCH_TEST_CASE("SDPA limits: elastic, float64, unaligned head dimensions are named") {
  using attnbench::kernels::sdpa_unsupported;
  auto bf16 = torch::zeros({2, 4, 16, 32}, torch::kBFloat16);
  FamilySpec s = spec_for("alibi+distance_bias", 4, 8, torch::kFloat32);
  CATCH_CHECK(sdpa_unsupported(bf16, bf16, bf16, s).empty());
  auto f32 = bf16.to(torch::kFloat32), f16 = bf16.to(torch::kHalf);
  CATCH_CHECK(sdpa_unsupported(f32, f32, f32, s).empty());
  CATCH_CHECK(sdpa_unsupported(f16, f16, f16, s).empty());
  auto f64 = bf16.to(torch::kFloat64);
  CATCH_CHECK_THAT(sdpa_unsupported(f64, f64, f64, s), Contains("Double"));
  CATCH_CHECK_THAT(sdpa_unsupported(bf16, bf16, f32, s), Contains("one dtype"));
  auto d12 = torch::zeros({2, 4, 16, 12}, torch::kBFloat16);
  CATCH_CHECK_THAT(sdpa_unsupported(d12, d12, d12, s), Contains("multiple of 8"));
  CATCH_CHECK_THAT(sdpa_unsupported(bf16, torch::zeros({2, 4, 8, 32}, torch::kBFloat16), bf16, s),
                   Contains("shape"));
  s.distance_bias = torch::zeros({3, 8});
  CATCH_CHECK_THAT(sdpa_unsupported(bf16, bf16, bf16, s), Contains("distance_bias must be [H, W]"));
  FamilySpec elastic;
  elastic.normalizer = Normalizer::Elastic;
  elastic.tau = torch::full({4}, -1.0);
  CATCH_CHECK_THAT(sdpa_unsupported(bf16, bf16, bf16, elastic), Contains("Elastic-Softmax"));
}

}  // namespace sdpa_test
