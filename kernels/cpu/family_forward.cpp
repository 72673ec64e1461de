// Two-pass tiled forward of the attention family (docs/kernels.md, "Forward"):
//   pass 1  lse_i = log sum_{j<=i} exp(s_ij) with an online max and sum over key tiles;
//   pass 2  p_ij = exp(s_ij - lse_i); a_ij = p_ij (softmax) or ReLU(p_ij + t_i) (elastic);
//           o_i = sum_j a_ij v_j, divided by r_i = sum_j a_ij when renormalising (r_i = 0 -> 0).
// The elastic threshold needs the final normaliser, so a single online pass is impossible
// (docs/paper.md 1.5). Only lse and r (O(T)) are kept for the backward.
#include <ATen/Parallel.h>

#include <limits>
#include <vector>

#include "kernels/cpu/family_kernel.h"
#include "kernels/cpu/family_tiles.h"
#include "kernels/cpu/fast_exp.h"

namespace attnbench::kernels::cpu {

template <typename T>
void family_forward(const FamilyProblem<T>& p, T* out, T* lse, T* rowsum) {
  const int64_t T_len = p.T_len, Tq = p.Tq(), D = p.D, first = p.first;
  const int64_t n_qtiles = (Tq + kBlockM - 1) / kBlockM;
  at::parallel_for(0, p.B * p.H * n_qtiles, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> s(kBlockM * kBlockN), acc(kBlockM * D), m(kBlockM), l(kBlockM);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t bh = task / n_qtiles, h = bh % p.H;
      const int64_t i0 = (task % n_qtiles) * kBlockM, mq = std::min(kBlockM, Tq - i0);
      const T* q_bh = p.q + bh * Tq * D;
      const T* k_bh = p.k + bh * T_len * D;
      const T* v_bh = p.v + bh * T_len * D;
      const T* bias_h = p.bias ? p.bias + h * T_len : nullptr;
      const T* c_bh = p.forget ? p.forget + bh * T_len : nullptr;
      const T* t_row = p.elastic ? p.thresh + bh * Tq + i0 : nullptr;
      T* lse_row = lse + bh * Tq + i0;
      T* r_row = rowsum + bh * Tq + i0;
      const int64_t i_first = first + i0;  // the position of the tile's first query
      const int64_t key_end = i_first + mq;  // causal: no key beyond the tile's last query

      // Pass 1: online max and sum of exponentials.
      std::fill(m.begin(), m.end(), -std::numeric_limits<T>::infinity());
      std::fill(l.begin(), l.end(), T(0));
      for (int64_t j0 = 0; j0 < key_end; j0 += kBlockN) {
        const int64_t nk = std::min(kBlockN, key_end - j0);
        detail::score_tile(p, q_bh, k_bh, bias_h, c_bh, i0, mq, j0, nk, s.data());
        for (int64_t r = 0; r < mq; ++r) {
          const int64_t len = detail::valid_keys(i_first + r, j0, nk);
          if (len == 0) continue;
          T* row = s.data() + r * nk;
          T mx = row[0];
          for (int64_t c = 1; c < len; ++c) mx = row[c] > mx ? row[c] : mx;
          const T m_new = std::max(m[r], mx);
          for (int64_t c = 0; c < len; ++c) row[c] -= m_new;
          exp_inplace(row, len);
          T sum = 0;
          for (int64_t c = 0; c < len; ++c) sum += row[c];
          l[r] = l[r] * std::exp(m[r] - m_new) + sum;
          m[r] = m_new;
        }
      }
      for (int64_t r = 0; r < mq; ++r) lse_row[r] = m[r] + std::log(l[r]);

      // Pass 2: weights and output.
      std::fill(acc.begin(), acc.end(), T(0));
      std::fill(r_row, r_row + mq, T(0));
      for (int64_t j0 = 0; j0 < key_end; j0 += kBlockN) {
        const int64_t nk = std::min(kBlockN, key_end - j0);
        detail::score_tile(p, q_bh, k_bh, bias_h, c_bh, i0, mq, j0, nk, s.data());
        for (int64_t r = 0; r < mq; ++r) {
          const int64_t len = detail::valid_keys(i_first + r, j0, nk);
          T* row = s.data() + r * nk;
          for (int64_t c = 0; c < len; ++c) row[c] -= lse_row[r];
          exp_inplace(row, len);
          if (p.elastic) {
            const T t = t_row[r];
            for (int64_t c = 0; c < len; ++c) row[c] = row[c] + t > T(0) ? row[c] + t : T(0);
          }
          T sum = 0;
          for (int64_t c = 0; c < len; ++c) sum += row[c];
          r_row[r] += sum;
          std::fill(row + len, row + nk, T(0));  // the causal mask, re-applied after the offset
        }
        gemm_nn<T>(p.gemm, mq, D, nk, T(1), s.data(), nk, v_bh + j0 * D, D, T(1), acc.data(), D);
      }
      T* o = out + (bh * Tq + i0) * D;
      for (int64_t r = 0; r < mq; ++r) {
        const T f = !p.renormalize ? T(1) : (r_row[r] > T(0) ? T(1) / r_row[r] : T(0));
        for (int64_t d = 0; d < D; ++d) o[r * D + d] = acc[r * D + d] * f;
      }
    }
  });
}

template void family_forward<float>(const FamilyProblem<float>&, float*, float*, float*);
template void family_forward<double>(const FamilyProblem<double>&, double*, double*, double*);

}  // namespace attnbench::kernels::cpu
