// The eager reference of the whole attention family (docs/variants.md, "Backends"): materialises
// the [B, H, T, T] scores with torch ops, so autograd gives every gradient. Tests, diagnostics and
// the "eager" backend use it; fused kernels are checked against it. Variants outside the family
// build their own normalisers on the same scores (eager_family_scores).
#pragma once
#include <torch/torch.h>

#include "kernels/attention_family.h"

namespace attnbench::variants {

// Every function here takes the queries of the last Tq of T positions: q [B, H, Tq, D] with
// Tq <= T, k and v [B, H, T, D]; row r is query position i = T - Tq + r (Tq = T in training;
// Tq < T in an incremental step over cached keys, docs/variants.md "Incremental decoding").

// The causal mask [Tq, T] on `device`: true where key j is visible to query row r (j <= T - Tq + r).
torch::Tensor causal_mask(int64_t Tq, int64_t T, const torch::Device& device);
// The square one, [T, T].
torch::Tensor causal_mask(int64_t T, const torch::Device& device);

// q, k with any RoPE already applied. The scores [B, H, Tq, T], future entries left as computed
// (the caller masks them):
//   s_ij = q_i . k_j / sqrt(D) - slope_h (i - j) + b[h, i - j] (i - j < W) + C_i - C_j
// each term present when its spec field is (spec.log_forget_cumsum covers all T positions).
// Float32 at least (float64 inputs stay float64).
torch::Tensor eager_family_scores(const torch::Tensor& q, const torch::Tensor& k,
                                  const kernels::FamilySpec& spec);

// The family's attention: the scores above, then the causal softmax (with the sink logit S_h in
// its denominator when spec.sink_logit is defined) or Elastic-Softmax as in variants/elastic.h
// (a per-token spec.tau covers the Tq query positions), and returns a . v [B, H, Tq, D] in v's
// dtype. When `weights` is non-null, stores the post-normaliser weights a [B, H, Tq, T] there.
torch::Tensor eager_family_attention(const torch::Tensor& q, const torch::Tensor& k,
                                     const torch::Tensor& v, const kernels::FamilySpec& spec,
                                     torch::Tensor* weights = nullptr);

}  // namespace attnbench::variants
