// The fused CPU attention of the family as a custom autograd function (docs/kernels.md).
// Registered as the CPU FusedKernel "cpu-tiled"; tests and bench/attention.cpp call it directly to
// pick the tile-product implementation.
#pragma once
#include <torch/torch.h>

#include "kernels/attention_family.h"
#include "kernels/cpu/tile_gemm.h"

namespace attnbench::kernels::cpu {

// Causal self-attention of the queries q [B, H, Tq, D] at the last Tq <= T positions over k, v
// [B, H, T, D] (Tq = T in training; Tq < T is an incremental decoding step); float32 and float64
// run natively, 16-bit types in float32. Returns [B, H, Tq, D] with gradients for q, k, v, spec.tau
// ([H] or [B, Tq, H]), spec.distance_bias ([H, W]) and spec.alibi_slopes ([H], should they ever
// require grad).
torch::Tensor fused_family_attention(const torch::Tensor& q, const torch::Tensor& k,
                                     const torch::Tensor& v, const FamilySpec& spec,
                                     TileGemm gemm = default_tile_gemm());

}  // namespace attnbench::kernels::cpu
