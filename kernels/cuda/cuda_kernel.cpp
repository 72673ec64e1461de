// The CUDA FusedKernel "cuda" (docs/kernels.md, "CUDA"): one kernel per device (the registry's
// rule), so this file routes each call of the family to the code that serves it:
//   softmax forms (softmax, ALiBi, distance bias, RoPE) -> LibTorch's SDPA (sdpa_kernel.cpp)
//   Elastic-Softmax                                     -> attnbench's fused kernels (family_cuda.h)
// The Elastic route is unvalidated until the GPU tests (tests/kernels/family_cuda_gpu_test.cpp)
// have passed on a real device: backend "auto" then runs eager, "fused" opts in.
// Compiled only in the CUDA build (cmake/Libraries.cmake, ab_kernels_cuda, linked whole).
#include <string>

#include "kernels/attention_family.h"
#include "kernels/cuda/family_cuda.h"
#include "kernels/cuda/sdpa_kernel.h"

namespace attnbench::kernels {
namespace {

bool elastic_route(const FamilySpec& spec) {
  switch (spec.normalizer) {  // no default: -Wswitch lists this site when a normaliser is added
    case Normalizer::Softmax:
      return false;
    case Normalizer::Elastic:
      return true;
  }
  return true;  // unreachable; family_cuda_unsupported refuses an unknown normaliser
}

torch::Tensor cuda_forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                           const FamilySpec& spec) {
  return elastic_route(spec) ? gpu::family_cuda_attention(q, k, v, spec)
                             : sdpa_forward(q, k, v, spec);
}

std::string cuda_limits(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const FamilySpec& spec) {
  return elastic_route(spec) ? gpu::family_cuda_unsupported(q, k, v, spec)
                             : sdpa_limits(q, k, v, spec);
}

std::string cuda_unvalidated(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
                             const FamilySpec& spec) {
  return elastic_route(spec) ? "the fused CUDA Elastic-Softmax kernel has not yet passed its GPU "
                               "tests (docs/kernels.md, \"CUDA kernels\")"
                             : "";
}

// Self-registration (kernels/attention_family.h); ab_kernels_cuda is linked whole.
const bool registered = [] {
  FusedKernel kernel;
  kernel.name = "cuda";
  kernel.forward = &cuda_forward;
  kernel.unsupported = &cuda_limits;
  kernel.unvalidated = &cuda_unvalidated;  // square calls only (query_offset false)
  register_fused_kernel("cuda", std::move(kernel));
  return true;
}();

}  // namespace
}  // namespace attnbench::kernels
