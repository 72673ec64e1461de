// LibTorch API differences kept in one place (docs/toolchain.md, "LibTorch 1.13 and 2.x": 1.13
// here, 2.x on the GPU machines). Only bench/ and tests call these, except the training section
// at the end (device, precision and memory switches), which model/device.h and train/ use.
#pragma once
#include <torch/torch.h>
#include <torch/version.h>
#include <c10/core/Allocator.h>
#include <ATen/autocast_mode.h>
#if defined(ATTNBENCH_CUDA)
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include <string>
#include <tuple>

namespace attnbench::kernels {

// LibTorch's own causal softmax attention on q, k, v [B, H, T, D]: an outside reference for our
// softmax kernels. 1.13 has only the private at::_scaled_dot_product_attention(q, k, v, mask,
// dropout, need_weights, is_causal), which returns (output, weights); 2.x made it public with a
// different signature.
inline torch::Tensor torch_causal_attention(const torch::Tensor& q, const torch::Tensor& k,
                                            const torch::Tensor& v) {
#if TORCH_VERSION_MAJOR >= 2
  return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, /*dropout_p=*/0.0,
                                          /*is_causal=*/true);
#else
  return std::get<0>(at::_scaled_dot_product_attention(q, k, v, /*attn_mask=*/{},
                                                       /*dropout_p=*/0.0,
                                                       /*need_attn_weights=*/false,
                                                       /*is_causal=*/true));
#endif
}

// The type of c10::MemoryReportingInfoBase::reportMemoryUsage's totals (total_allocated,
// total_reserved): int64_t in 1.13, size_t in 2.x. Read off the declaration itself, so that an
// override (bench/attention.cpp's peak-memory probe) matches whichever LibTorch it is built against.
namespace detail {
template <typename F>
struct ThirdParameter;
template <typename C, typename R, typename A1, typename A2, typename A3, typename... Rest>
struct ThirdParameter<R (C::*)(A1, A2, A3, Rest...)> {
  using type = A3;
};
}  // namespace detail
using MemoryReportTotal =
    detail::ThirdParameter<decltype(&c10::MemoryReportingInfoBase::reportMemoryUsage)>::type;

// ---- Training on CUDA: bf16 autocast, the allocator's peak, the GPU's name ----
// ATTNBENCH_CUDA is defined by the CUDA build (cmake/Cuda.cmake), whose LibTorch has the CUDA
// headers; the Debian build answers "unknown" (-1, "") without them.

// While alive and `enabled`: CUDA ops autocast to bf16 (torch.autocast("cuda", torch.bfloat16)):
// matrix products in bf16, softmax, log_softmax, norms and losses in fp32. 2.4 replaced the
// CUDA-only calls with per-device ones.
class CudaBf16Autocast {
 public:
  explicit CudaBf16Autocast(bool enabled) : enabled_(enabled) {
    if (!enabled_) return;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    prev_enabled_ = at::autocast::is_autocast_enabled(at::kCUDA);
    prev_dtype_ = at::autocast::get_autocast_dtype(at::kCUDA);
    at::autocast::set_autocast_enabled(at::kCUDA, true);
    at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
#else
    prev_enabled_ = at::autocast::is_enabled();
    prev_dtype_ = at::autocast::get_autocast_gpu_dtype();
    at::autocast::set_enabled(true);
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
#endif
    at::autocast::increment_nesting();
  }
  ~CudaBf16Autocast() {
    if (!enabled_) return;
    // Leaving the outermost region drops the cached bf16 copies of the weights, as torch.autocast
    // does: the next step's weights differ.
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    at::autocast::set_autocast_enabled(at::kCUDA, prev_enabled_);
    at::autocast::set_autocast_dtype(at::kCUDA, prev_dtype_);
#else
    at::autocast::set_enabled(prev_enabled_);
    at::autocast::set_autocast_gpu_dtype(prev_dtype_);
#endif
  }
  CudaBf16Autocast(const CudaBf16Autocast&) = delete;
  CudaBf16Autocast& operator=(const CudaBf16Autocast&) = delete;

 private:
  bool enabled_;
  bool prev_enabled_ = false;
  at::ScalarType prev_dtype_ = at::kBFloat16;
};

// Peak bytes held by tensors on CUDA device `index` since the last reset (torch.cuda.
// max_memory_allocated); -1 in a build without CUDA.
inline int64_t cuda_peak_allocated_bytes(c10::DeviceIndex index) {
#if defined(ATTNBENCH_CUDA)
  // allocated_bytes[0]: StatType::AGGREGATE (all pools); the enum's namespace moved in 2.x.
  return c10::cuda::CUDACachingAllocator::getDeviceStats(index).allocated_bytes[0].peak;
#else
  (void)index;
  return -1;
#endif
}

inline void reset_cuda_peak_allocated(c10::DeviceIndex index) {
#if defined(ATTNBENCH_CUDA)
  c10::cuda::CUDACachingAllocator::resetPeakStats(index);
#else
  (void)index;
#endif
}

// Makes CUDA device `index` the current one (torch.cuda.set_device): a data-parallel rank's
// kernels and NCCL's communicator then default to its own GPU. Nothing in a build without CUDA.
inline void set_current_cuda_device(c10::DeviceIndex index) {
#if defined(ATTNBENCH_CUDA)
  c10::cuda::set_device(index);
#else
  (void)index;
#endif
}

// The GPU's name ("NVIDIA H100 80GB HBM3"); "" in a build without CUDA.
inline std::string cuda_device_name(c10::DeviceIndex index) {
#if defined(ATTNBENCH_CUDA)
  return at::cuda::getDeviceProperties(index)->name;
#else
  (void)index;
  return "";
#endif
}

// ---- SDPA's memory-efficient kernel, called directly (kernels/cuda/sdpa_kernel.cpp) ----

// Causal attention on q, k, v [B, H, T, D] through at::_scaled_dot_product_efficient_attention
// (the CUTLASS kernel from xFormers in ATen), with an optional additive `bias` [B, H, T, T] in q's
// dtype, last dimension contiguous and row stride a multiple of 16 (kernels/sdpa.h,
// sdpa_score_bias). is_causal = true together with a bias is accepted by this op (not by the
// public scaled_dot_product_attention): the kernel skips the key tiles above the diagonal. The
// log-sum-exp its backward needs is computed only when a gradient will be taken, as the public op
// decides (grad mode on and an input requiring grad); its backward then returns the bias gradient
// when `bias` requires grad. Signature checked against 2.11's ATen/ops header (2.0 had no bias);
// 1.13 has no such op.
inline constexpr bool kTorchHasEfficientAttention = TORCH_VERSION_MAJOR >= 2;

inline torch::Tensor torch_efficient_causal_attention(const torch::Tensor& q,
                                                      const torch::Tensor& k,
                                                      const torch::Tensor& v,
                                                      const torch::Tensor& bias) {
#if TORCH_VERSION_MAJOR >= 2
  const bool grad = at::GradMode::is_enabled() &&
                    (q.requires_grad() || k.requires_grad() || v.requires_grad() ||
                     (bias.defined() && bias.requires_grad()));
  std::optional<at::Tensor> attn_bias;
  if (bias.defined()) attn_bias = bias;
  return std::get<0>(at::_scaled_dot_product_efficient_attention(
      q, k, v, attn_bias, /*compute_log_sumexp=*/grad, /*dropout_p=*/0.0, /*is_causal=*/true));
#else
  (void)q, (void)k, (void)v, (void)bias;
  throw std::logic_error("the memory-efficient SDPA kernel needs LibTorch 2.x");
#endif
}

}  // namespace attnbench::kernels
