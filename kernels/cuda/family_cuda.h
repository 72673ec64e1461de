// The fused CUDA kernels of the attention family (kernels/cuda/family_forward.cu,
// family_backward.cu; docs/kernels.md, "CUDA kernels") as a custom autograd function on LibTorch
// tensors, the CUDA counterpart of kernels/cpu/fused_attention.h: the same FamilySpec, the same
// tables (kernels/family_tables.h), the CPU kernel as its host-side reference.
#pragma once
#include <torch/torch.h>

#include <string>

#include "kernels/attention_family.h"

namespace attnbench::kernels::gpu {

// Why the CUDA kernels cannot compute `spec` on these inputs, "" when they can: q, k, v [B, H, T, D]
// of one CUDA device and one dtype among float32 (3xTF32 products), float16, bfloat16; D 64 or
// 128; any T; ALiBi slopes [H] and a distance bias [H, W >= 1]; softmax, or Elastic-Softmax with
// tau [H] or [B, T, H], over n_i or not, renormalised or not.
std::string family_cuda_unsupported(const torch::Tensor& q, const torch::Tensor& k,
                                    const torch::Tensor& v, const FamilySpec& spec);

// Output [B, H, T, D] in q's dtype, with gradients for q, k, v, tau, distance_bias and
// alibi_slopes. skip_dead_tiles = false runs every tile's V products (tests and the benchmark
// compare both; the results are the same).
torch::Tensor family_cuda_attention(const torch::Tensor& q, const torch::Tensor& k,
                                    const torch::Tensor& v, const FamilySpec& spec,
                                    bool skip_dead_tiles = true);

}  // namespace attnbench::kernels::gpu
