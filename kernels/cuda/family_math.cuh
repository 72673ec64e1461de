// The per-element math of the attention family (docs/kernels.md, "The function"), shared
// by the fused CUDA kernels and their CPU tests: torch-free, header-only, and every function
// `__host__ __device__` under nvcc, so that tests/kernels/cuda/ checks on the CPU exactly the
// arithmetic the GPU runs (docs/kernels.md, "CUDA kernels: shared math and tile schedule").
//
// For one (batch b, head h), query i sees keys j <= i, n_i = i + 1 of them:
//   s_ij = q_i . k_j / sqrt(D) + bias_h(i - j)
//   bias_h(d) = -slope_h d (ALiBi) + distance_bias[h, d] for d < W, else 0 (both optional)
//   lse_i = log sum_{j<=i} exp(s_ij),  p_ij = exp(s_ij - lse_i)
//   softmax: a_ij = p_ij;  Elastic-Softmax: a_ij = ReLU(p_ij + t_i), M_ij = 1[p_ij + t_i > 0]
//   t_i = tau / n_i or tau, tau per head [H] or per token [B, T, H]
//   o_i = sum_j a_ij v_j u_i, u_i = 1 / rowsum_i when renormalising (0 for a zero row), else 1
//
// Numeric types: float (the GPU: bf16 / fp16 inputs are converted to float before any of this) or
// double (the CPU tests' reference precision). 16-bit types are refused at compile time for the
// probability and threshold functions: forming p + t in bf16 flipped 97 of 111,168 ReLU mask
// decisions on random data, fp32 flipped none (docs/paper.md 1.3).
//
// No std:: functions (their device overloads vary between CUDA versions) and no std::numeric_limits
// (constexpr host functions need --expt-relaxed-constexpr in device code): the C math functions and
// INFINITY from <math.h>, which nvcc provides on both sides. Do not build the kernels with
// --use_fast_math: tau / n_i must be the IEEE quotient the CPU kernel computes, and the ReLU mask
// decision p + t > 0 is only reproducible with IEEE arithmetic.
#pragma once
#include <math.h>
#include <stdint.h>

#ifndef AB_HD
#if defined(__CUDACC__)
#define AB_HD __host__ __device__
#else
#define AB_HD
#endif
#endif

// Not `cuda`: inside attnbench::kernels that name would hide libcu++'s ::cuda namespace
// (cuda::std, cuda::pipeline) from the .cu files that include this.
namespace attnbench::kernels::gpu {

// The precision every probability, threshold and mask decision is formed in: float at least.
template <typename T>
struct ThresholdPrecision {
  static constexpr bool ok = sizeof(T) >= 4;
};
#define AB_REQUIRE_FP32(T)                                                                     \
  static_assert(ThresholdPrecision<T>::ok,                                                     \
                "p = exp(s - lse) and the threshold p + t must be formed in float32 at least " \
                "(bf16 flips ReLU mask decisions)")

AB_HD inline float math_exp(float x) { return ::expf(x); }
AB_HD inline double math_exp(double x) { return ::exp(x); }
AB_HD inline float math_log(float x) { return ::logf(x); }
AB_HD inline double math_log(double x) { return ::log(x); }
AB_HD inline float math_abs(float x) { return ::fabsf(x); }
AB_HD inline double math_abs(double x) { return ::fabs(x); }

// ---------------------------------------------------------------------------------------------
// Scores and the position bias

// ALiBi (Press et al. 2022): -slope_h (i - j), a linear penalty on the distance.
template <typename T>
AB_HD inline T alibi_bias(T slope, int64_t distance) {
  return -slope * static_cast<T>(distance);
}

// The learnable distance bias b[h, d] (one row distance_bias_h = distance_bias + h * W): the table
// covers distances 0 .. W - 1 and farther keys get no bias, 0 (docs/variants.md, the authors' "no
// bias after bias length"). A negative distance (a key above the diagonal, masked anyway) also
// reads 0: a kernel that forms the bias for a whole diagonal tile before masking must not read
// b[h, -1].
template <typename T>
AB_HD inline T distance_bias_at(const T* distance_bias_h, int64_t bias_window, int64_t distance) {
  return distance >= 0 && distance < bias_window ? distance_bias_h[distance] : T(0);
}

// bias_h(i - j): ALiBi and/or the distance bias, each absent when its pointer is null.
// alibi_slopes [H]; distance_bias [H, bias_window].
template <typename T>
AB_HD inline T score_bias(const T* alibi_slopes, const T* distance_bias, int64_t bias_window,
                          int64_t h, int64_t distance) {
  T b = T(0);
  if (alibi_slopes) b += alibi_bias(alibi_slopes[h], distance);
  if (distance_bias) b += distance_bias_at(distance_bias + h * bias_window, bias_window, distance);
  return b;
}

// s_ij = (q_i . k_j) / sqrt(D) + bias: the bias is added after the 1/sqrt(D) scaling
// (docs/paper.md 1.2), so it is not scaled with the dot product.
template <typename T>
AB_HD inline T score(T q_dot_k, T scale, T bias) {
  return q_dot_k * scale + bias;
}

// ---------------------------------------------------------------------------------------------
// The Elastic threshold t_i

// n_i = i + 1: query i (0-based) sees keys 0 .. i. The paper's "tau / seq_len" read as the number
// of visible keys, as the authors' code divides (docs/variants.md, per_head_over_len).
AB_HD inline int64_t visible_keys(int64_t i) { return i + 1; }

// tau for (b, h, i): per head tau [H], or per token tau [B, T, H] (the query token's own offset,
// g_h(x_i) in docs/variants.md).
template <typename T>
AB_HD inline T tau_at(const T* tau, bool tau_per_token, int64_t b, int64_t h, int64_t i,
                      int64_t T_len, int64_t H) {
  return tau_per_token ? tau[(b * T_len + i) * H + h] : tau[h];
}

// t_i = tau / n_i (tau_over_len) or tau. An IEEE division, as the CPU kernel's table.
template <typename T>
AB_HD inline T elastic_threshold(T tau, int64_t i, bool tau_over_len) {
  AB_REQUIRE_FP32(T);
  return tau_over_len ? tau / static_cast<T>(visible_keys(i)) : tau;
}

// dl/dtau contributed by row i, from dl/dt_i: t_i = tau / n_i has dt_i/dtau = 1 / n_i.
template <typename T>
AB_HD inline T tau_grad(T dt, int64_t i, bool tau_over_len) {
  return tau_over_len ? dt / static_cast<T>(visible_keys(i)) : dt;
}

// ---------------------------------------------------------------------------------------------
// Probabilities, the ReLU mask and the weights

// p_ij = exp(s_ij - lse_i) with the final lse of the row (sweep 2 and the backward). In float at
// least: p + t is then formed from an fp32 p, never from a rounded 16-bit one.
template <typename T>
AB_HD inline T softmax_prob(T s, T lse) {
  AB_REQUIRE_FP32(T);
  return math_exp(s - lse);
}

// M_ij = 1[p_ij + t_i > 0]. Exactly 0 is not kept: ReLU's derivative there is taken as 0, like
// autograd's, and the weight is 0 either way. The sign of a rounded IEEE sum is the sign of the
// exact sum, so the decision depends only on how p and t were rounded, which is why both are fp32.
template <typename T>
AB_HD inline bool elastic_keep(T p, T t) {
  AB_REQUIRE_FP32(T);
  return p + t > T(0);
}

// a_ij = ReLU(p_ij + t_i) = max(p + t, 0), for visible keys only: a key above the diagonal has
// p = 0 but would get ReLU(0 + t) = t > 0 when t is positive, so a kernel that masks scores with
// -inf must still zero the weights of masked entries after the offset (the causal mask re-applied).
template <typename T>
AB_HD inline T elastic_weight(T p, T t) {
  AB_REQUIRE_FP32(T);
  const T x = p + t;
  return x > T(0) ? x : T(0);
}

// ---------------------------------------------------------------------------------------------
// Online log-sum-exp (sweep 1)
//
// A running max m and sum l = sum_j exp(s_ij - m) per row. Before a tile's exponentials are added
// the state is rescaled to m' = max(m, tile max): l <- l exp(m - m'), so no exponential overflows.
// Only lse = m + log l leaves sweep 1: the Elastic weights ReLU(p + t) are not invariant to this
// rescale (ReLU(c p + t) != c ReLU(p + t)), which is why the output needs a second sweep with the
// final lse instead of FlashAttention's rescaled accumulator (docs/paper.md 1.5).
template <typename T>
struct OnlineLse {
  T max = -static_cast<T>(INFINITY);
  T sum = T(0);

  // Raises the running max to cover `tile_max` (the max of the row's visible scores in the next
  // tile) and returns it: add() then takes exp(s - max). The empty state (max = -inf) has sum 0
  // and needs no rescale; exp(-inf - -inf) would be NaN.
  AB_HD T rescale(T tile_max) {
    if (tile_max > max) {
      if (max != -static_cast<T>(INFINITY)) sum *= math_exp(max - tile_max);
      max = tile_max;
    }
    return max;
  }
  AB_HD void add(T s) { sum += math_exp(s - max); }
  // Combines the state of another part of the same row (e.g. the lanes of a warp that each hold
  // some of the row's columns), as if its scores had been added here.
  AB_HD void merge(const OnlineLse& o) {
    if (o.max == -static_cast<T>(INFINITY)) return;
    const T m = rescale(o.max);
    sum += o.sum * math_exp(o.max - m);
  }
  // log sum_j exp(s_ij); -inf for a row that saw no key (never happens under causal masking).
  AB_HD T lse() const { return max + math_log(sum); }
};

// ---------------------------------------------------------------------------------------------
// Renormalisation

// u_i: 1 / rowsum_i when renormalising, 1 otherwise. A renormalised row whose weights are all 0
// outputs 0 and gets zero gradients: every p + t < 0 (or = 0) there, so the row stays all-zero
// under small perturbations and its output is locally constant. u = 0 gives exactly that without
// 0/0.
template <typename T>
AB_HD inline T renorm_factor(T rowsum, bool renormalize) {
  if (!renormalize) return T(1);
  return rowsum > T(0) ? T(1) / rowsum : T(0);
}

// ---------------------------------------------------------------------------------------------
// Backward per row and per element
//
// With g_ij = dO_i . v_j, c_i = dO_i . o_i when renormalising (0 otherwise) and u_i as above, the
// CPU kernel (kernels/cpu/family_backward.cpp; docs/kernels.md, "Backward: derivation") uses
//   dA_ij   = (g_ij - c_i) u_i                      the gradient of the unnormalised weight a_ij
//   dt_i    = sum_j M_ij dA_ij                      dl/dt_i
//   delta_i = sum_j p_ij M_ij dA_ij
//   dS_ij   = p_ij (M_ij dA_ij - delta_i)           (softmax: M = 1 on the causal part, t = 0)
// and needs a sweep over the row's keys for delta and dt before any dS. Saving in the forward
//   N_i = sum_j M_ij v_j  (kept_v_sum, [D])   and   n_i = sum_j M_ij  (kept_count)
// removes that sweep (n_i here is the kept count, not the visible count i + 1):
//   dt_i    = u_i (dO_i . N_i - c_i n_i)                                 (sum of g over M, linear)
//   delta_i = sum_j M_ij (a_ij - t_i) dA_ij          (p = a - t where M = 1)
//           = u_i (dO_i . Ohat_i - c_i r_i) - t_i dt_i                   (M a = a)
//           = u_i (dO_i . (Ohat_i - t_i N_i) - c_i (r_i - t_i n_i))
// with r_i the rowsum and Ohat_i = sum_j a_ij v_j the UNNORMALISED output. The saved output o_i is
// Ohat_i without renormalisation and Ohat_i / r_i with it, so:
//   not renormalised (u = 1, c = 0):   delta_i = dO_i . o_i - t_i dt_i,   dt_i = dO_i . N_i
//   renormalised, r_i > 0:             u_i (dO_i . Ohat_i - c_i r_i) = u_i (r_i c_i - c_i r_i) = 0,
//                                      delta_i = -t_i dt_i   (the output is invariant to scaling
//                                      the row's weights, so sum_j a_ij dA_ij = 0)
//   renormalised, r_i = 0:             u_i = 0, delta_i = dt_i = 0
// The same formula with the saved normalised o_i in place of Ohat_i would be off by
// u_i c_i (1 - r_i) under renormalisation; the code below never forms it that way, and the
// cancelling term is dropped instead of computed (no rounding left from r c - c r).
// Checked against the CPU kernel and central differences in tests/kernels/cuda/.

template <typename T>
struct RowGrad {
  T delta;  // delta_i
  T dt;     // dl/dt_i (Elastic only; 0 for softmax)
};

// c_i: dO_i . o_i when renormalising, else 0. `dout_dot_out` is dO_i . o_i with o the saved output.
template <typename T>
AB_HD inline T renorm_offset(T dout_dot_out, bool renormalize) {
  return renormalize ? dout_dot_out : T(0);
}

// Elastic-Softmax: delta_i and dt_i from dO_i . o_i, dO_i . N_i, rowsum r_i, kept count n_i, t_i.
template <typename T>
AB_HD inline RowGrad<T> elastic_row_grad(T dout_dot_out, T dout_dot_kept_v, T rowsum, T kept_count,
                                         T t, bool renormalize) {
  const T u = renorm_factor(rowsum, renormalize);
  const T c = renorm_offset(dout_dot_out, renormalize);
  const T dt = u * (dout_dot_kept_v - c * kept_count);
  const T direct = renormalize ? T(0) : dout_dot_out;  // u (dO . Ohat - c r), exactly
  return {direct - t * dt, dt};
}

// Softmax: delta_i = sum_j p_ij dA_ij = u_i (dO_i . Ohat_i - c_i r_i): dO_i . o_i, or 0 when
// renormalising (rowsum = sum_j p_ij = 1 up to rounding, and the same cancellation as above).
template <typename T>
AB_HD inline RowGrad<T> softmax_row_grad(T dout_dot_out, bool renormalize) {
  return {renormalize ? T(0) : dout_dot_out, T(0)};
}

// dA_ij = (g_ij - c_i) u_i, g_ij = dO_i . v_j.
template <typename T>
AB_HD inline T weight_grad(T g, T c, T u) {
  return (g - c) * u;
}

// dS_ij = p_ij (M_ij dA_ij - delta_i), both normalisers: softmax passes keep = true for every
// causal entry. Where keep is false dA is not needed (a dead tile never forms G = dO V^T), and dS
// is -p delta: not zero, so dQ and dK still visit every causal tile.
template <typename T>
AB_HD inline T score_grad(T p, bool keep, T dA, T delta) {
  return p * ((keep ? dA : T(0)) - delta);
}

// ---------------------------------------------------------------------------------------------
// Dead tiles (Elastic, t_i < 0)
//
// a_ij = 0 iff p_ij <= -t_i iff s_ij <= lse_i + log(-t_i). A (query tile, key tile) is entirely
// zero when every row's max visible score in it satisfies this: the forward can skip its V load
// and A V product, the backward its dO V^T and dV products (dS = -p delta is not zero there).
// Rows with t_i >= 0 are never dead (bound -inf: p + t > 0 wherever p > 0).
//
// The bound is lowered by a margin so that a tile called dead has no weight that the kernel's own
// rounding of p = exp(s - lse) and p + t would keep: skipping must never change a result. The
// errors it covers, in the log domain: the rounding of lse + log(-t) and of the kernel's s - lse,
// or of an exp2 form's s log2(e) - lse log2(e) (a few eps (|lse| + |log(-t)|)), and the relative
// error of exp (CUDA's expf <= 2 ulp, __expf 2 + 1.17 |x| ulp: under 16 ulp for the |x| < 12 of any
// threshold down to p = 1/16384). 64 eps (1 + |lse| + |log(-t)|) covers them with room; in float
// it is a few 1e-4 (a relative change of the threshold on p), so the skip rate is unchanged in
// practice (tests/kernels/cuda/: no all-zero tile was missed).
template <typename T>
AB_HD inline T dead_margin(T lse, T log_neg_t) {
  const T eps = sizeof(T) == 4 ? T(1.1920929e-07) : T(2.220446049250313e-16);
  return T(64) * eps * (T(1) + math_abs(lse) + math_abs(log_neg_t));
}

// The score bound of row i: every visible s_ij <= bound gives a_ij = 0. Computed once per row
// (after sweep 1), compared with the row's max score in each tile: one compare per row and tile.
template <typename T>
AB_HD inline T dead_score_bound(T lse, T t) {
  AB_REQUIRE_FP32(T);
  if (!(t < T(0))) return -static_cast<T>(INFINITY);
  const T log_neg_t = math_log(-t);
  return lse + log_neg_t - dead_margin(lse, log_neg_t);
}

// Whether row i contributes nothing in this tile: its max visible score (-inf when no key of the
// tile is visible to it, e.g. rows above the diagonal part of a tile) is at most its bound.
template <typename T>
AB_HD inline bool row_dead(T row_max_score, T bound) {
  return row_max_score <= bound;
}

#undef AB_REQUIRE_FP32

}  // namespace attnbench::kernels::gpu
