// The attention family's softmax forms on LibTorch's scaled_dot_product_attention (docs/kernels.md,
// "CUDA"), the softmax route of the CUDA kernel (kernels/cuda/cuda_kernel.cpp), by kernels/sdpa.h:
//   no score bias (softmax, RoPE or none)  -> at::scaled_dot_product_attention(is_causal), LibTorch
//                                             picks cuDNN / flash / memory-efficient;
//                                             at T % 128 == 64 the memory-efficient kernel directly;
//   ALiBi and/or distance bias             -> the memory-efficient kernel directly, is_causal plus the
//                                             bias in q's dtype, which returns the bias gradient.
// Elastic-Softmax is unsupported here (a reason, not an error). Compiled only in the CUDA build.
#include "kernels/cuda/sdpa_kernel.h"

#include <cstdint>
#include <string>

#include "kernels/sdpa.h"
#include "kernels/torch_compat.h"

namespace attnbench::kernels {
namespace {

// The memory-efficient kernel reads the last dimension contiguously and 16-byte aligned
// (CHECK_ALIGNED_PTR, "query is not correctly aligned"); the model's q, k, v are [B, T, H, D]
// projections viewed as [B, H, T, D], which already are. Anything else is copied once.
torch::Tensor aligned(const torch::Tensor& t) {
  const bool ok = t.stride(-1) == 1 && reinterpret_cast<std::uintptr_t>(t.data_ptr()) % 16 == 0;
  return ok ? t : t.clone(at::MemoryFormat::Contiguous);
}

}  // namespace

torch::Tensor sdpa_forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                           const FamilySpec& spec) {
  const int64_t B = q.size(0), H = q.size(1), T = q.size(2);
  switch (sdpa_route(spec, T)) {  // no default: -Wswitch lists this site when a route is added
    case SdpaRoute::Causal:
      return torch_causal_attention(q, k, v);
    case SdpaRoute::CausalMemEfficient:
      return torch_efficient_causal_attention(aligned(q), aligned(k), aligned(v), {});
    case SdpaRoute::BiasMemEfficient: {
      const torch::Tensor bias =
          sdpa_score_bias(spec, T, q.scalar_type(), q.device()).expand({B, H, T, T});
      return torch_efficient_causal_attention(aligned(q), aligned(k), aligned(v), bias);
    }
  }
  throw std::logic_error("cuda-sdpa: unknown route");
}

std::string sdpa_limits(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const FamilySpec& spec) {
  if (!kTorchHasEfficientAttention) return "the CUDA kernel needs LibTorch 2.x";
  if (!q.is_cuda() || !k.is_cuda() || !v.is_cuda()) return "CUDA tensors expected";
  if (k.device() != q.device() || v.device() != q.device()) return "q, k, v on one device expected";
  for (const auto* t : {&spec.alibi_slopes, &spec.distance_bias}) {
    if (t->defined() && t->device() != q.device()) return "position bias on q's device expected";
  }
  return sdpa_unsupported(q, k, v, spec);
}

}  // namespace attnbench::kernels
