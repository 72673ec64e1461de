// The fused CUDA kernels of the attention family on raw device buffers (docs/kernels.md, "CUDA
// kernels"), torch-free so that the .cu files compile without ATen (a .cu that includes it takes
// 30-55 s). Same problem as the CPU kernel's FamilyProblem (kernels/cpu/family_kernel.h): q, k, v
// contiguous [B, H, T, D]; the score bias as a table over distances and the Elastic threshold per
// row, both precomputed by the caller in fp32 (kernels/family_tables.h), so the kernels never
// branch on the variant beyond "elastic" and "renormalize".
#pragma once
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include <string>

namespace attnbench::kernels::gpu {

enum class Element { F32, F16, BF16 };

struct DeviceProblem {
  int64_t B = 0, H = 0, T_len = 0, D = 0;  // D: 64 or 128
  Element element = Element::BF16;
  const void* q = nullptr;  // [B, H, T, D] of `element`, rows 16-byte aligned
  const void* k = nullptr;
  const void* v = nullptr;
  const float* bias = nullptr;    // [H, T]: bias_h(d) for d = i - j, or null (no position bias)
  const float* thresh = nullptr;  // [B, H, T]: t_i, Elastic only
  bool elastic = false;
  bool renormalize = false;
  bool skip_dead_tiles = true;  // Elastic: skip the V work of tiles whose weights are all 0
};

// The forward's results: o [B, H, T, D] of `element`; lse, rowsum [B, H, T] fp32; for Elastic
// also N = sum_j M_ij v_j [B, H, T, D] and n = sum_j M_ij [B, H, T], fp32 (the backward's delta and
// dt without a third sweep, family_math.cuh).
struct ForwardResults {
  void* out = nullptr;
  float* lse = nullptr;
  float* rowsum = nullptr;
  float* kept_v_sum = nullptr;
  float* kept_count = nullptr;
  float* out_f32 = nullptr;  // 16-bit: o [B, H, T, D] in fp32 too, for the backward's delta_i, c_i
};

// The backward's inputs beyond the problem: the forward's results and dl/do.
struct BackwardInputs {
  const void* out = nullptr;
  const void* dout = nullptr;  // [B, H, T, D] of `element`
  const float* lse = nullptr;
  const float* rowsum = nullptr;
  const float* kept_v_sum = nullptr;
  const float* kept_count = nullptr;
  const float* out_f32 = nullptr;  // the forward's out_f32, or null: delta_i, c_i from `out`
};

// dq: fp32 [B, H, T, D], zeroed by the caller (CTAs add into it); dk, dv [B, H, T, D] of `element`;
// dthresh [B, H, T] fp32 (Elastic); dbias [B, H, T] fp32 zeroed, the sum of dS along each
// diagonal d = i - j (null without a position bias); rows [3, B, H, T] fp32 workspace (delta_i,
// c_i, u_i).
struct BackwardResults {
  float* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
  float* dthresh = nullptr;
  float* dbias = nullptr;
  float* rows = nullptr;
};

// The dynamic shared memory a CTA of each kernel needs (D 64 or 128), for the caller to compare
// with the device's per-block limit before it launches.
std::size_t family_forward_smem(Element e, int64_t D);
std::size_t family_backward_smem(Element e, int64_t D);

// Launch on `stream`; "" or the CUDA error, with the kernel's name.
std::string family_forward_cuda(const DeviceProblem& p, const ForwardResults& r,
                                cudaStream_t stream);
std::string family_backward_cuda(const DeviceProblem& p, const BackwardInputs& in,
                                 const BackwardResults& r, cudaStream_t stream);

}  // namespace attnbench::kernels::gpu
