// The fused CPU kernels of the attention family (docs/kernels.md) on raw, contiguous buffers: the
// Tq queries q [B, H, Tq, D] at positions first .. T - 1 (first = T - Tq; training has Tq = T, an
// incremental decoding step Tq < T) over the keys and values k, v [B, H, T, D] of all T positions.
// Per-head and per-row inputs are precomputed by the caller so that the inner loops never branch on
// the variant:
//   bias[h, d]       the additive score bias at distance d = i - j (alibi and/or distance bias), [H, T]
//   forget[b, h, t]  C_t of a forgetting gate: the scores gain C_i - C_j, [B, H, T]
//   thresh[b, h, i]  the elastic offset t_i (tau / n_i or tau) of each query, [B, H, Tq]; unused
//                    for softmax
#pragma once
#include <cstdint>

#include "kernels/cpu/tile_gemm.h"

namespace attnbench::kernels::cpu {

// Query and key tile sizes (the authors' Triton kernel uses 64 x 64, docs/paper.md 1.5).
constexpr int64_t kBlockM = 64;
constexpr int64_t kBlockN = 64;

template <typename T>
struct FamilyProblem {
  int64_t B = 0, H = 0, T_len = 0, D = 0;  // T_len: keys (positions)
  int64_t first = 0;  // the position of query 0: queries first .. T_len - 1 (0: the square problem)
  const T* q = nullptr;
  const T* k = nullptr;
  const T* v = nullptr;
  const T* bias = nullptr;    // [H, T] or nullptr (no positional bias)
  const T* forget = nullptr;  // [B, H, T] or nullptr (no forgetting gate)
  const T* thresh = nullptr;  // [B, H, Tq], elastic only
  bool elastic = false;
  bool renormalize = false;
  TileGemm gemm = TileGemm::Blas;

  int64_t Tq() const { return T_len - first; }  // queries
};

// Pass 1 (log-sum-exp) and pass 2 (weights, output) over query tiles in parallel.
// Writes out [B,H,Tq,D], lse [B,H,Tq] and rowsum [B,H,Tq] (sum_j a_ij, the renormaliser).
template <typename T>
void family_forward(const FamilyProblem<T>& p, T* out, T* lse, T* rowsum);

// Recomputing backward. Inputs: out, dout [B,H,Tq,D], lse, rowsum [B,H,Tq]. Outputs dq [B,H,Tq,D],
// dk, dv [B,H,T,D]; dthresh [B,H,Tq] = dL/dt_i (elastic only, may be nullptr), dbias_bh [B,H,T] =
// the sum of dS over each diagonal d = i - j (nullptr when no bias gradient is wanted) and dforget
// [B,H,T] = dL/dC_t = sum_j dS_tj - sum_i dS_it (nullptr without a forgetting gate).
template <typename T>
void family_backward(const FamilyProblem<T>& p, const T* out, const T* dout, const T* lse,
                     const T* rowsum, T* dq, T* dk, T* dv, T* dthresh, T* dbias_bh, T* dforget);

}  // namespace attnbench::kernels::cpu
