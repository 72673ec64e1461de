// Recomputing backward of the attention family (docs/kernels.md, "Backward"). With g_ij = dO_i .
// v_j, c_i = dO_i . o_i and u_i = 1 / r_i when renormalising (0 for an all-zero row), else u_i = 1,
// c_i = 0:
//   dA_ij    = (g_ij - c_i) u_i                        (gradient w.r.t. the unnormalised a_ij)
//   M_ij     = 1[p_ij + t_i > 0] (elastic), 1 (softmax)
//   delta_i  = sum_j p_ij M_ij dA_ij
//   dS_ij    = p_ij (M_ij dA_ij - delta_i)
//   dQ = dS K / sqrt(D), dK = dS^T Q / sqrt(D), dV = (A u)^T dO
//   dt_i     = sum_j M_ij dA_ij, and the bias gradient at distance d is sum_{i-j=d} dS_ij;
//   a forgetting gate's dC_t = sum_j dS_tj - sum_i dS_it (its scores hold + C_i - C_j).
// Scores and p are recomputed from lse; nothing [T, T] is stored. One task per (batch, head): its
// key tiles receive dK and dV contributions from every query tile, so owning the whole head avoids
// both atomics and per-thread copies of dK and dV.
#include <ATen/Parallel.h>

#include <vector>

#include "kernels/cpu/family_kernel.h"
#include "kernels/cpu/family_tiles.h"
#include "kernels/cpu/fast_exp.h"

namespace attnbench::kernels::cpu {
namespace {

template <typename T>
T dot(const T* a, const T* b, int64_t n) {
  T s = 0;
  for (int64_t d = 0; d < n; ++d) s += a[d] * b[d];
  return s;
}

}  // namespace

template <typename T>
void family_backward(const FamilyProblem<T>& p, const T* out, const T* dout, const T* lse,
                     const T* rowsum, T* dq, T* dk, T* dv, T* dthresh, T* dbias_bh,
                     T* dforget) {
  const int64_t T_len = p.T_len, Tq = p.Tq(), D = p.D, first = p.first;
  const T scale = T(1) / std::sqrt(static_cast<T>(D));
  at::parallel_for(0, p.B * p.H, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> s(kBlockM * kBlockN), g(kBlockM * kBlockN), c(kBlockM), u(kBlockM),
        delta(kBlockM), dt(kBlockM);
    for (int64_t bh = begin; bh < end; ++bh) {
      // Query-side buffers hold Tq rows per (b, h), key-side ones T_len.
      const int64_t h = bh % p.H, off_q = bh * Tq * D, off_k = bh * T_len * D;
      const T *q_bh = p.q + off_q, *k_bh = p.k + off_k, *v_bh = p.v + off_k;
      const T *o_bh = out + off_q, *do_bh = dout + off_q;
      const T* bias_h = p.bias ? p.bias + h * T_len : nullptr;
      const T* c_bh = p.forget ? p.forget + bh * T_len : nullptr;
      T* dc = dforget ? dforget + bh * T_len : nullptr;
      T *dq_bh = dq + off_q, *dk_bh = dk + off_k, *dv_bh = dv + off_k;
      T* dbias = dbias_bh ? dbias_bh + bh * T_len : nullptr;

      for (int64_t i0 = 0; i0 < Tq; i0 += kBlockM) {
        const int64_t mq = std::min(kBlockM, Tq - i0);
        const int64_t i_first = first + i0, key_end = i_first + mq;  // positions, as in the forward
        const T* lse_row = lse + bh * Tq + i0;
        const T* t_row = p.elastic ? p.thresh + bh * Tq + i0 : nullptr;
        const T* do_tile = do_bh + i0 * D;
        for (int64_t r = 0; r < mq; ++r) {
          const T rs = rowsum[bh * Tq + i0 + r];
          c[r] = p.renormalize ? dot(do_tile + r * D, o_bh + (i0 + r) * D, D) : T(0);
          u[r] = !p.renormalize ? T(1) : (rs > T(0) ? T(1) / rs : T(0));
          // Softmax: sum_j p_ij g_ij = dO_i . o_i (unnormalised), so delta needs no extra pass.
          delta[r] = p.renormalize ? T(0) : dot(do_tile + r * D, o_bh + (i0 + r) * D, D);
          dt[r] = 0;
        }

        // Elastic: delta_i and dt_i need the ReLU mask of the whole row first.
        if (p.elastic) {
          std::fill(delta.begin(), delta.end(), T(0));
          for (int64_t j0 = 0; j0 < key_end; j0 += kBlockN) {
            const int64_t nk = std::min(kBlockN, key_end - j0);
            detail::score_tile(p, q_bh, k_bh, bias_h, c_bh, i0, mq, j0, nk, s.data());
            gemm_nt<T>(p.gemm, mq, nk, D, T(1), do_tile, D, v_bh + j0 * D, D, T(0), g.data(), nk);
            for (int64_t r = 0; r < mq; ++r) {
              const int64_t len = detail::valid_keys(i_first + r, j0, nk);
              T* srow = s.data() + r * nk;
              const T* grow = g.data() + r * nk;
              for (int64_t cc = 0; cc < len; ++cc) srow[cc] -= lse_row[r];
              exp_inplace(srow, len);
              T sd = 0, st = 0;
              for (int64_t cc = 0; cc < len; ++cc) {
                const bool keep = srow[cc] + t_row[r] > T(0);
                const T da = keep ? (grow[cc] - c[r]) * u[r] : T(0);
                sd += srow[cc] * da;
                st += da;
              }
              delta[r] += sd;
              dt[r] += st;
            }
          }
          for (int64_t r = 0; r < mq; ++r) dthresh[bh * Tq + i0 + r] = dt[r];
        }

        for (int64_t j0 = 0; j0 < key_end; j0 += kBlockN) {
          const int64_t nk = std::min(kBlockN, key_end - j0);
          detail::score_tile(p, q_bh, k_bh, bias_h, c_bh, i0, mq, j0, nk, s.data());
          gemm_nt<T>(p.gemm, mq, nk, D, T(1), do_tile, D, v_bh + j0 * D, D, T(0), g.data(), nk);
          for (int64_t r = 0; r < mq; ++r) {
            const int64_t i = i_first + r, len = detail::valid_keys(i, j0, nk);
            T* srow = s.data() + r * nk;  // becomes the normalised weights a_ij u_i
            T* grow = g.data() + r * nk;  // becomes dS_ij
            for (int64_t cc = 0; cc < len; ++cc) srow[cc] -= lse_row[r];
            exp_inplace(srow, len);
            for (int64_t cc = 0; cc < len; ++cc) {
              const T pij = srow[cc];
              const T a = p.elastic ? pij + t_row[r] : pij;
              const bool keep = !p.elastic || a > T(0);
              const T da = keep ? (grow[cc] - c[r]) * u[r] : T(0);
              srow[cc] = keep ? a * u[r] : T(0);
              grow[cc] = pij * (da - delta[r]);
            }
            std::fill(srow + len, srow + nk, T(0));
            std::fill(grow + len, grow + nk, T(0));
            if (dbias)
              for (int64_t cc = 0; cc < len; ++cc) dbias[i - j0 - cc] += grow[cc];
            if (dc) {  // s_ij holds + C_i - C_j
              for (int64_t cc = 0; cc < len; ++cc) {
                dc[i] += grow[cc];
                dc[j0 + cc] -= grow[cc];
              }
            }
          }
          gemm_tn<T>(p.gemm, nk, D, mq, T(1), s.data(), nk, do_tile, D, T(1), dv_bh + j0 * D, D);
          gemm_tn<T>(p.gemm, nk, D, mq, scale, g.data(), nk, q_bh + i0 * D, D, T(1), dk_bh + j0 * D,
                     D);
          gemm_nn<T>(p.gemm, mq, D, nk, scale, g.data(), nk, k_bh + j0 * D, D, T(1), dq_bh + i0 * D,
                     D);
        }
      }
    }
  });
}

template void family_backward<float>(const FamilyProblem<float>&, const float*, const float*,
                                     const float*, const float*, float*, float*, float*, float*,
                                     float*, float*);
template void family_backward<double>(const FamilyProblem<double>&, const double*, const double*,
                                      const double*, const double*, double*, double*, double*,
                                      double*, double*, double*);

}  // namespace attnbench::kernels::cpu
