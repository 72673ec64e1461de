// The eager reference of the whole attention family (docs/variants.md, "Backends"): materialises
// the [B, H, T, T] scores with torch ops, so autograd gives every gradient. Tests, diagnostics and
// the "eager" backend use it; fused kernels are checked against it.
#pragma once
#include <torch/torch.h>

#include "kernels/attention_family.h"

namespace attnbench::variants {

// q, k, v [B, H, T, D] with any RoPE already applied. Computes
//   s_ij = q_i . k_j / sqrt(D) - slope_h (i - j) + b[h, i - j] (i - j < W),  j <= i
// then softmax, or Elastic-Softmax as in variants/elastic.h, and returns a . v [B, H, T, D] in v's
// dtype. Scores, biases and the normaliser run in float32 at least (float64 inputs stay float64).
// When `weights` is non-null, stores the post-normaliser weights a [B, H, T, T] there.
torch::Tensor eager_family_attention(const torch::Tensor& q, const torch::Tensor& k,
                                     const torch::Tensor& v, const kernels::FamilySpec& spec,
                                     torch::Tensor* weights = nullptr);

}  // namespace attnbench::variants
