// The fused CPU attention of the family as a custom autograd function (docs/kernels.md).
// Registered as the CPU FusedKernel "cpu-tiled"; tests and bench/attention.cpp call it directly to
// pick the tile-product implementation.
#pragma once
#include <torch/torch.h>

#include "kernels/attention_family.h"
#include "kernels/cpu/tile_gemm.h"

namespace attnbench::kernels::cpu {

// q, k, v: [B, H, T, D], causal self-attention; float32 and float64 run natively, 16-bit types in
// float32. Returns [B, H, T, D] with gradients for q, k, v, spec.tau ([H] or [B, T, H]),
// spec.distance_bias ([H, W]) and spec.alibi_slopes ([H], should they ever require grad).
torch::Tensor fused_family_attention(const torch::Tensor& q, const torch::Tensor& k,
                                     const torch::Tensor& v, const FamilySpec& spec,
                                     TileGemm gemm = default_tile_gemm());

}  // namespace attnbench::kernels::cpu
