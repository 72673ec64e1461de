// Tile helpers shared by the fused forward and backward (family_kernel.h): score recomputation and
// the causal extent of a tile row. Internal to kernels/cpu.
#pragma once
#include <algorithm>
#include <cmath>

#include "kernels/cpu/family_kernel.h"

namespace attnbench::kernels::cpu::detail {

// Keys j0 .. j0 + valid_keys - 1 are visible to query i (causal: j <= i), 0 <= valid <= nk.
inline int64_t valid_keys(int64_t i, int64_t j0, int64_t nk) {
  return std::clamp<int64_t>(i - j0 + 1, 0, nk);
}

// S[mq, nk] = Q[i0:i0+mq] K[j0:j0+nk]^T / sqrt(D) + bias_h(i - j) + C_i - C_j on the visible
// entries (docs/paper.md 1.2: the bias is added after the 1/sqrt(d) scaling; C the forgetting
// gate's cumulative log f of this (b, h), or nullptr). Query row r of the tile is q_bh's row
// i0 + r, at position i = p.first + i0 + r. Entries j > i are left as computed and must be
// ignored by the caller (the row's valid_keys prefix is the causal part).
template <typename T>
void score_tile(const FamilyProblem<T>& p, const T* q_bh, const T* k_bh, const T* bias_h,
                const T* c_bh, int64_t i0, int64_t mq, int64_t j0, int64_t nk, T* s) {
  const T scale = T(1) / std::sqrt(static_cast<T>(p.D));
  gemm_nt<T>(p.gemm, mq, nk, p.D, scale, q_bh + i0 * p.D, p.D, k_bh + j0 * p.D, p.D, T(0), s, nk);
  if (!bias_h && !c_bh) return;
  for (int64_t r = 0; r < mq; ++r) {
    const int64_t i = p.first + i0 + r, len = valid_keys(i, j0, nk);
    T* row = s + r * nk;
    if (bias_h) {
      const T* b = bias_h + (i - j0);  // b[-c] is the bias at distance i - (j0 + c)
      for (int64_t c = 0; c < len; ++c) row[c] += b[-c];
    }
    if (c_bh) {
      for (int64_t c = 0; c < len; ++c) row[c] += c_bh[i] - c_bh[j0 + c];
    }
  }
}

}  // namespace attnbench::kernels::cpu::detail
