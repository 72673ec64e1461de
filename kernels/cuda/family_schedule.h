// An emulation, in plain C++ on float or double arrays, of the tile schedule the fused CUDA kernels
// of the attention family are to run (docs/kernels.md, "CUDA kernels: shared math
// and tile schedule"). No kernel calls it: tests/kernels/cuda/ compares it with the CPU kernel, so
// that the schedule's decisions (tile order, causal bounds, the diagonal tile's mask, dead-tile
// skips, the per-tile accumulation of the distance-bias gradient along diagonals, a backward
// without a third sweep) are checked before a GPU runs them. Every element goes through
// kernels/cuda/family_math.cuh, the functions the .cu files share; only the loops are the
// emulation's own, and each loop nest names the GPU work it stands for. With 16-bit operands
// (TileSchedule::operands) it rounds what the kernels round before their tensor-core products.
//
// The schedule (Br = block_q query rows, Bc = block_k key columns per tile):
//   forward   one CTA per (b, h, query tile [i0, i0 + mq)). It visits key tiles 0 .. kt_end - 1,
//             kt_end = ceil((i0 + mq) / Bc) (causal: no key beyond its last query), in key_order,
//             twice. Descending (the default, as FlashAttention-2) puts the tiles that cross the
//             diagonal, the only ones needing the causal mask, first.
//             sweep 1: S = Q K^T / sqrt(D) + bias, an online max and sum per row -> lse;
//             sweep 2: S again, p = exp(s - lse), a = ReLU(p + t) (Elastic) or p, O += A V,
//             rowsum += sum_j a, and for Elastic N += M V, n += sum_j M. A dead tile (every row's
//             max score under its bound, family_math.cuh) skips its V load and A V product.
//             Saved: o, lse, rowsum and, for Elastic, N [T, D] and n [T]: O(T D) per (b, h).
//   backward  preprocessing, one thread per row: delta_i and dt_i from dO_i . o_i, dO_i . N_i,
//             rowsum_i, n_i and t_i (family_math.cuh, elastic_row_grad): no sweep over keys.
//             main: one CTA per (b, h, key tile [j0, j0 + nk)), owning dK and dV of its keys. It
//             visits the query tiles that see them, from the one holding row j0 (the diagonal) to
//             the last, recomputes S and p from lse, forms G = dO V^T (not on a dead tile), dS, and
//             dV += (A u)^T dO, dK += dS^T Q / sqrt(D), dQ += dS K / sqrt(D) (atomic adds into an
//             fp32 dQ on the GPU); it sums the tile's dS along each of its mq + nk - 1 diagonals
//             into a per-tile partial and adds that to the (b, h) distance vector (atomic on the
//             GPU).
//             reduction: dtau from dt (/ n_i; summed over b and i per head), the distance-bias
//             gradient [H, W] and the ALiBi slope gradient from the distance vectors summed over b.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/cuda/family_math.cuh"

namespace attnbench::kernels::gpu {

enum class KeyOrder { Ascending, Descending };

// The element type of the tensor-core products' operands: the inputs' dtype on the GPU.
enum class Operands { Float, BFloat16, Half };

struct TileSchedule {
  int64_t block_q = 64;                       // Br: query rows per tile
  int64_t block_k = 64;                       // Bc: key columns per tile
  KeyOrder key_order = KeyOrder::Descending;  // the forward's order of key tiles
  bool skip_dead_tiles = true;                // Elastic: skip the work a dead tile does not need
  // 16-bit operands: the kernels round the weights before A V and (A u)^T dO, and dS before dS^T Q
  // and dS K, to them; every sum stays in fp32. Float: nothing is rounded (3xTF32 products).
  Operands operands = Operands::Float;
  // Whether delta_i = dO_i . o_i reads o rounded to the operands, as FlashAttention-2's backward
  // does. The kernels read the fp32 o their 16-bit forward also saves (family_cuda.cpp).
  bool delta_from_rounded_output = false;
};

// x rounded to nearest, ties to even, in `e`: bfloat16 keeps 8 significant bits, float16 11 and
// steps by 2^-24 below its least normal 2^-14. Overflow is not modelled (float16's 65504 lies far
// above any weight or dS of the tests).
template <typename T>
T round_to(T x, Operands e) {
  if (e == Operands::Float || x == T(0) || !std::isfinite(x)) return x;
  const int bits = e == Operands::BFloat16 ? 8 : 11;
  int exp = 0;
  std::frexp(static_cast<double>(x), &exp);            // |x| = f 2^exp, f in [0.5, 1)
  if (e == Operands::Half) exp = std::max(exp, -13);   // subnormals: the step of [2^-14, 2^-13)
  const double step = std::ldexp(1.0, exp - bits);
  return static_cast<T>(std::nearbyint(static_cast<double>(x) / step) * step);
}

inline int64_t tile_count(int64_t n, int64_t block) { return (n + block - 1) / block; }

// Forward causal bound: query tile [i0, i0 + mq) visits key tiles 0 .. key_tiles_visited - 1
// (the last one holds key i0 + mq - 1, its last query).
inline int64_t key_tiles_visited(int64_t i0, int64_t mq, int64_t block_k) {
  return tile_count(i0 + mq, block_k);
}

// Backward causal bound: the first query tile that sees key j0 is the one holding row j0; every
// later query tile sees the whole key tile's prefix up to its rows.
inline int64_t first_query_tile(int64_t j0, int64_t block_q) { return j0 / block_q; }

// The key tile visited at `step` of `count` in `order`.
inline int64_t key_tile_at(int64_t step, int64_t count, KeyOrder order) {
  return order == KeyOrder::Ascending ? step : count - 1 - step;
}

// Row i sees keys j0 .. j0 + visible_in_tile - 1 of the tile [j0, j0 + nk) (causal: j <= i).
inline int64_t visible_in_tile(int64_t i, int64_t j0, int64_t nk) {
  return std::clamp<int64_t>(i - j0 + 1, 0, nk);
}

// Whether the tile crosses the diagonal, i.e. needs the causal mask: its last key lies beyond its
// first query. Tiles wholly below the diagonal run unmasked.
inline bool needs_causal_mask(int64_t i0, int64_t j0, int64_t nk) { return j0 + nk - 1 > i0; }

// One call's inputs, all contiguous: q, k, v [B, H, T, D]; alibi_slopes [H] and distance_bias
// [H, W] optional (null); tau [H] or [B, T, H] for Elastic.
template <typename T>
struct FamilyInputs {
  int64_t B = 0, H = 0, T_len = 0, D = 0;
  const T* q = nullptr;
  const T* k = nullptr;
  const T* v = nullptr;
  const T* alibi_slopes = nullptr;
  const T* distance_bias = nullptr;
  int64_t bias_window = 0;  // W
  bool elastic = false;
  const T* tau = nullptr;
  bool tau_per_token = false;
  bool tau_over_len = true;
  bool renormalize = false;
};

struct TileCounts {
  int64_t visited = 0;  // (query tile, key tile) pairs visited
  int64_t masked = 0;   // of which cross the diagonal (causal mask applied)
  int64_t dead = 0;     // of which are dead (all weights 0); skipped when skip_dead_tiles
};

template <typename T>
struct ForwardSaved {
  std::vector<T> out;         // o [B, H, T, D]
  std::vector<T> lse;         // [B, H, T]
  std::vector<T> rowsum;      // r = sum_j a_ij [B, H, T]
  std::vector<T> kept_v_sum;  // N_i = sum_j M_ij v_j [B, H, T, D], Elastic only
  std::vector<T> kept_count;  // n_i = sum_j M_ij [B, H, T], Elastic only
  int64_t n_qtiles = 0, n_ktiles = 0;
  std::vector<uint8_t> dead;  // [B, H, n_qtiles, n_ktiles]: 1 where sweep 2 found the tile dead
  TileCounts sweep1, sweep2;
};

template <typename T>
struct FamilyGradients {
  std::vector<T> dq, dk, dv;      // [B, H, T, D]
  std::vector<T> dthresh;         // dl/dt_i [B, H, T] (Elastic)
  std::vector<T> dtau;            // like tau: [H] or [B, T, H] (Elastic)
  std::vector<T> dbias_distance;  // [H, T]: sum over b of dS along each diagonal d = i - j
  std::vector<T> ddistance_bias;  // [H, W] (when distance_bias is given)
  std::vector<T> dalibi_slopes;   // [H] (when alibi_slopes is given)
  TileCounts tiles;               // dead: tiles whose dO V^T and dV products were skipped
};

namespace schedule_detail {

template <typename T>
T dot(const T* a, const T* b, int64_t n) {
  T s = T(0);
  for (int64_t d = 0; d < n; ++d) s += a[d] * b[d];
  return s;
}

// The S tile of rows [i0, i0 + mq) and keys [j0, j0 + nk) of head (b, h), as the MMA and the bias
// epilogue would form it; entries above the diagonal are -inf (masked). row_max[r] is the max of
// row r's visible scores, -inf when it sees none of the tile.
template <typename T>
void score_tile(const FamilyInputs<T>& in, int64_t bh, int64_t i0, int64_t mq, int64_t j0,
                int64_t nk, int64_t ld, T* s, T* row_max) {
  const int64_t h = bh % in.H, D = in.D;
  const T scale = T(1) / static_cast<T>(::sqrt(static_cast<double>(D)));
  const T* q = in.q + bh * in.T_len * D;
  const T* k = in.k + bh * in.T_len * D;
  for (int64_t r = 0; r < mq; ++r) {
    const int64_t i = i0 + r, len = visible_in_tile(i, j0, nk);
    T mx = -static_cast<T>(INFINITY);
    for (int64_t c = 0; c < nk; ++c) {
      if (c >= len) {
        s[r * ld + c] = -static_cast<T>(INFINITY);
        continue;
      }
      const int64_t j = j0 + c;
      const T bias = score_bias(in.alibi_slopes, in.distance_bias, in.bias_window, h, i - j);
      const T x = score(dot(q + i * D, k + j * D, D), scale, bias);
      s[r * ld + c] = x;
      mx = x > mx ? x : mx;
    }
    row_max[r] = mx;
  }
}

template <typename T>
T threshold_of(const FamilyInputs<T>& in, int64_t bh, int64_t i) {
  const int64_t b = bh / in.H, h = bh % in.H;
  return elastic_threshold(tau_at(in.tau, in.tau_per_token, b, h, i, in.T_len, in.H), i,
                           in.tau_over_len);
}

// A tile is dead when every row is (family_math.cuh). Softmax tiles never are.
template <typename T>
bool tile_dead(const FamilyInputs<T>& in, int64_t mq, const T* row_max, const T* bound) {
  if (!in.elastic) return false;
  for (int64_t r = 0; r < mq; ++r)
    if (!row_dead(row_max[r], bound[r])) return false;
  return true;
}

// The forward, one piece per phase of its CTA.

// One forward CTA: query tile `it` = rows [i0, i0 + mq) of head bh, visiting key tiles
// 0 .. kt_end - 1.
struct QueryTileCta {
  int64_t bh, it, i0, mq, kt_end;
};

// A forward CTA's registers and shared memory, reused by every CTA.
template <typename T>
struct ForwardWorkspace {
  std::vector<T> s, row_max, t, bound, acc;
  std::vector<OnlineLse<T>> state;
  ForwardWorkspace(int64_t Br, int64_t Bc, int64_t D)
      : s(Br * Bc), row_max(Br), t(Br), bound(Br), acc(Br * D), state(Br) {}
};

// A query tile's rows of the saved lse, rowsum and, for Elastic, N and n (null otherwise).
template <typename T>
struct SavedRows {
  T* lse;
  T* rowsum;
  T* kept_v;
  T* kept_n;
};

template <typename T>
ForwardSaved<T> allocate_forward(const FamilyInputs<T>& in, const TileSchedule& sched) {
  const int64_t T_len = in.T_len, D = in.D;
  ForwardSaved<T> f;
  f.out.assign(in.B * in.H * T_len * D, T(0));
  f.lse.assign(in.B * in.H * T_len, T(0));
  f.rowsum.assign(in.B * in.H * T_len, T(0));
  if (in.elastic) {
    f.kept_v_sum.assign(in.B * in.H * T_len * D, T(0));
    f.kept_count.assign(in.B * in.H * T_len, T(0));
  }
  f.n_qtiles = tile_count(T_len, sched.block_q), f.n_ktiles = tile_count(T_len, sched.block_k);
  f.dead.assign(in.B * in.H * f.n_qtiles * f.n_ktiles, 0);
  return f;
}

// Sweep 1: online log-sum-exp. Writes lse and each row's dead-score bound.
template <typename T>
void forward_sweep1_lse(const FamilyInputs<T>& in, const TileSchedule& sched,
                        const QueryTileCta& cta, ForwardWorkspace<T>& w, ForwardSaved<T>& f) {
  const int64_t T_len = in.T_len, Bc = sched.block_k, i0 = cta.i0, mq = cta.mq;
  std::fill(w.state.begin(), w.state.end(), OnlineLse<T>{});
  for (int64_t step = 0; step < cta.kt_end; ++step) {
    const int64_t j0 = key_tile_at(step, cta.kt_end, sched.key_order) * Bc;
    const int64_t nk = std::min(Bc, T_len - j0);
    score_tile(in, cta.bh, i0, mq, j0, nk, Bc, w.s.data(), w.row_max.data());
    ++f.sweep1.visited;
    f.sweep1.masked += needs_causal_mask(i0, j0, nk);
    for (int64_t r = 0; r < mq; ++r) {
      const int64_t len = visible_in_tile(i0 + r, j0, nk);
      if (len == 0) continue;
      w.state[r].rescale(w.row_max[r]);
      for (int64_t c = 0; c < len; ++c) w.state[r].add(w.s[r * Bc + c]);
    }
  }
  T* lse = f.lse.data() + cta.bh * T_len + i0;
  for (int64_t r = 0; r < mq; ++r) {
    lse[r] = w.state[r].lse();
    w.bound[r] = in.elastic ? dead_score_bound(lse[r], w.t[r]) : -static_cast<T>(INFINITY);
  }
}

// Sweep 2 on one live key tile [j0, j0 + nk) (S in w.s, leading dimension ld): p = exp(s - lse),
// a, O += A V, rowsum += sum_j a and, for Elastic, N += M V, n += sum_j M. The rowsum sums the
// weights as A V uses them, rounded to the operands (family_forward.cu: o_i an exact average).
template <typename T>
void forward_sweep2_tile(const FamilyInputs<T>& in, const TileSchedule& sched,
                         const QueryTileCta& cta, int64_t j0, int64_t nk, int64_t ld,
                         ForwardWorkspace<T>& w, const SavedRows<T>& rows) {
  const int64_t D = in.D;
  const T* v = in.v + cta.bh * in.T_len * D;
  for (int64_t r = 0; r < cta.mq; ++r) {
    const int64_t len = visible_in_tile(cta.i0 + r, j0, nk);  // the causal mask
    for (int64_t c = 0; c < len; ++c) {
      const T p = softmax_prob(w.s[r * ld + c], rows.lse[r]);
      const T a = round_to(in.elastic ? elastic_weight(p, w.t[r]) : p, sched.operands);
      const T* vj = v + (j0 + c) * D;
      for (int64_t d = 0; d < D; ++d) w.acc[r * D + d] += a * vj[d];
      rows.rowsum[r] += a;
      if (in.elastic && elastic_keep(p, w.t[r])) {
        for (int64_t d = 0; d < D; ++d) rows.kept_v[r * D + d] += vj[d];
        rows.kept_n[r] += T(1);
      }
    }
  }
}

// The end of sweep 2: o = O u, u the renormalisation factor of the row's rowsum.
template <typename T>
void forward_store_output(const FamilyInputs<T>& in, const QueryTileCta& cta,
                          const ForwardWorkspace<T>& w, const T* rowsum, ForwardSaved<T>& f) {
  const int64_t D = in.D;
  T* o = f.out.data() + (cta.bh * in.T_len + cta.i0) * D;
  for (int64_t r = 0; r < cta.mq; ++r) {
    const T u = renorm_factor(rowsum[r], in.renormalize);
    for (int64_t d = 0; d < D; ++d) o[r * D + d] = w.acc[r * D + d] * u;
  }
}

// Sweep 2: weights, output, rowsum; N and n for the backward.
template <typename T>
void forward_sweep2_output(const FamilyInputs<T>& in, const TileSchedule& sched,
                           const QueryTileCta& cta, ForwardWorkspace<T>& w, ForwardSaved<T>& f) {
  const int64_t T_len = in.T_len, D = in.D, Bc = sched.block_k, row0 = cta.bh * T_len + cta.i0;
  std::fill(w.acc.begin(), w.acc.end(), T(0));
  const SavedRows<T> rows{f.lse.data() + row0, f.rowsum.data() + row0,
                          in.elastic ? f.kept_v_sum.data() + row0 * D : nullptr,
                          in.elastic ? f.kept_count.data() + row0 : nullptr};
  for (int64_t step = 0; step < cta.kt_end; ++step) {
    const int64_t kt = key_tile_at(step, cta.kt_end, sched.key_order);
    const int64_t j0 = kt * Bc, nk = std::min(Bc, T_len - j0);
    score_tile(in, cta.bh, cta.i0, cta.mq, j0, nk, Bc, w.s.data(), w.row_max.data());
    ++f.sweep2.visited;
    f.sweep2.masked += needs_causal_mask(cta.i0, j0, nk);
    if (tile_dead(in, cta.mq, w.row_max.data(), w.bound.data())) {
      f.dead[(cta.bh * f.n_qtiles + cta.it) * f.n_ktiles + kt] = 1;
      ++f.sweep2.dead;
      if (sched.skip_dead_tiles) continue;  // no V load, no A V
    }
    forward_sweep2_tile(in, sched, cta, j0, nk, Bc, w, rows);
  }
  forward_store_output(in, cta, w, rows.rowsum, f);
}

// One forward CTA: query tile `it` of head bh, its thresholds, then sweeps 1 and 2.
template <typename T>
void forward_query_tile(const FamilyInputs<T>& in, const TileSchedule& sched, int64_t bh,
                        int64_t it, ForwardWorkspace<T>& w, ForwardSaved<T>& f) {
  const int64_t Br = sched.block_q, i0 = it * Br, mq = std::min(Br, in.T_len - i0);
  const QueryTileCta cta{bh, it, i0, mq, key_tiles_visited(i0, mq, sched.block_k)};
  for (int64_t r = 0; r < mq; ++r) w.t[r] = in.elastic ? threshold_of(in, bh, i0 + r) : T(0);
  forward_sweep1_lse(in, sched, cta, w, f);
  forward_sweep2_output(in, sched, cta, w, f);
}

// The backward, one piece per phase.

// Preprocessing's per-row results, [B, H, T] each.
template <typename T>
struct BackwardRows {
  std::vector<T> delta, c_off, u, t;
};

// What every backward CTA reads.
template <typename T>
struct BackwardArgs {
  const FamilyInputs<T>& in;
  const ForwardSaved<T>& f;
  const T* dout;
  const TileSchedule& sched;
  const BackwardRows<T>& rows;
  T scale;  // 1 / sqrt(D)
};

// One backward CTA: key tile [j0, j0 + nk) of head bh, whose q, k, v, dO start at off.
struct KeyTileCta {
  int64_t bh, off, j0, nk;
};

// A backward CTA's registers and shared memory, reused by every CTA.
template <typename T>
struct BackwardWorkspace {
  std::vector<T> s, gt, row_max, bound, dk_acc, dv_acc, diag;
  BackwardWorkspace(int64_t Br, int64_t Bc, int64_t D)
      : s(Br * Bc), gt(Br * Bc), row_max(Br), bound(Br), dk_acc(Bc * D), dv_acc(Bc * D),
        diag(Br + Bc - 1) {}
};

// Preprocessing of one row: delta_i, dt_i (into g.dthresh) and the renormalisation terms.
template <typename T>
void backward_preprocess_row(const FamilyInputs<T>& in, const ForwardSaved<T>& f, const T* dout,
                             const TileSchedule& sched, int64_t bh, int64_t i,
                             BackwardRows<T>& rows, FamilyGradients<T>& g) {
  const int64_t D = in.D, row = bh * in.T_len + i;
  const Operands o_type = sched.delta_from_rounded_output ? sched.operands : Operands::Float;
  T dout_dot_out = T(0);
  for (int64_t d = 0; d < D; ++d)
    dout_dot_out += dout[row * D + d] * round_to(f.out[row * D + d], o_type);
  rows.c_off[row] = renorm_offset(dout_dot_out, in.renormalize);
  rows.u[row] = renorm_factor(f.rowsum[row], in.renormalize);
  RowGrad<T> rg = softmax_row_grad(dout_dot_out, in.renormalize);
  if (in.elastic) {
    rows.t[row] = threshold_of(in, bh, i);
    rg = elastic_row_grad(dout_dot_out, dot(dout + row * D, f.kept_v_sum.data() + row * D, D),
                          f.rowsum[row], f.kept_count[row], rows.t[row], in.renormalize);
  }
  rows.delta[row] = rg.delta;
  g.dthresh[row] = rg.dt;
}

// Preprocessing: per row, no sweep over keys.
template <typename T>
BackwardRows<T> backward_preprocess(const FamilyInputs<T>& in, const ForwardSaved<T>& f,
                                    const T* dout, const TileSchedule& sched,
                                    FamilyGradients<T>& g) {
  const int64_t n = in.B * in.H * in.T_len;
  BackwardRows<T> rows{std::vector<T>(n), std::vector<T>(n), std::vector<T>(n),
                       std::vector<T>(n, T(0))};
  g.dthresh.assign(n, T(0));
  for (int64_t bh = 0; bh < in.B * in.H; ++bh)
    for (int64_t i = 0; i < in.T_len; ++i)
      backward_preprocess_row(in, f, dout, sched, bh, i, rows, g);
  return rows;
}

// Whether the tile of rows [row0, row0 + mq) (S's row maxima in w.row_max) is dead.
template <typename T>
bool backward_tile_dead(const BackwardArgs<T>& args, int64_t row0, int64_t mq,
                        BackwardWorkspace<T>& w) {
  for (int64_t r = 0; r < mq; ++r)
    w.bound[r] = args.in.elastic ? dead_score_bound(args.f.lse[row0 + r], args.rows.t[row0 + r])
                                 : -static_cast<T>(INFINITY);
  return tile_dead(args.in, mq, w.row_max.data(), w.bound.data());
}

// G = dO V^T on the visible entries of the tile.
template <typename T>
void backward_dout_v(const BackwardArgs<T>& args, const KeyTileCta& kc, int64_t i0, int64_t mq,
                     BackwardWorkspace<T>& w) {
  const int64_t D = args.in.D, Bc = args.sched.block_k;
  const T *v = args.in.v + kc.off, *dO = args.dout + kc.off;
  for (int64_t r = 0; r < mq; ++r)
    for (int64_t c = 0; c < visible_in_tile(i0 + r, kc.j0, kc.nk); ++c)
      w.gt[r * Bc + c] = dot(dO + (i0 + r) * D, v + (kc.j0 + c) * D, D);
}

// dS on the tile's visible entries; dV += (A u)^T dO (not on a skipped tile), dK += dS^T Q,
// dQ += dS K / sqrt(D), and dS summed along each diagonal into w.diag (index (i - j) - d_min).
template <typename T>
void backward_score_grads(const BackwardArgs<T>& args, const KeyTileCta& kc, int64_t i0,
                          int64_t mq, bool skip, int64_t d_min, BackwardWorkspace<T>& w,
                          FamilyGradients<T>& g) {
  const int64_t D = args.in.D, Bc = args.sched.block_k, row0 = kc.bh * args.in.T_len + i0;
  const T *q = args.in.q + kc.off, *k = args.in.k + kc.off, *dO = args.dout + kc.off;
  const BackwardRows<T>& br = args.rows;
  for (int64_t r = 0; r < mq; ++r) {
    const int64_t i = i0 + r, row = row0 + r, len = visible_in_tile(i, kc.j0, kc.nk);
    for (int64_t c = 0; c < len; ++c) {
      const int64_t j = kc.j0 + c;
      const T p = softmax_prob(w.s[r * Bc + c], args.f.lse[row]);
      const bool keep = !args.in.elastic || elastic_keep(p, br.t[row]);
      const T dA = skip ? T(0) : weight_grad(w.gt[r * Bc + c], br.c_off[row], br.u[row]);
      const T ds = score_grad(p, keep, dA, br.delta[row]);
      const Operands ops = args.sched.operands;
      if (!skip) {  // dV += (A u)^T dO
        const T a_u = round_to((args.in.elastic ? elastic_weight(p, br.t[row]) : p) * br.u[row],
                               ops);
        for (int64_t d = 0; d < D; ++d) w.dv_acc[c * D + d] += a_u * dO[i * D + d];
      }
      const T ds_operand = round_to(ds, ops);
      for (int64_t d = 0; d < D; ++d) {
        w.dk_acc[c * D + d] += ds_operand * q[i * D + d];
        g.dq[kc.off + i * D + d] += ds_operand * args.scale * k[j * D + d];  // atomic on the GPU
      }
      w.diag[(i - j) - d_min] += ds;  // the fp32 dS (family_backward.cu, score_grads)
    }
  }
}

// One (query tile it, key tile) step of a backward CTA: recompute S, G = dO V^T (not on a dead
// tile), dS and its products; add the tile's diagonal sums to the head's distance vector `dist`.
template <typename T>
void backward_tile(const BackwardArgs<T>& args, const KeyTileCta& kc, int64_t it,
                   BackwardWorkspace<T>& w, T* dist, FamilyGradients<T>& g) {
  const int64_t T_len = args.in.T_len, Br = args.sched.block_q, Bc = args.sched.block_k;
  const int64_t i0 = it * Br, mq = std::min(Br, T_len - i0), row0 = kc.bh * T_len + i0;
  score_tile(args.in, kc.bh, i0, mq, kc.j0, kc.nk, Bc, w.s.data(), w.row_max.data());
  ++g.tiles.visited;
  g.tiles.masked += needs_causal_mask(i0, kc.j0, kc.nk);
  const bool dead = backward_tile_dead(args, row0, mq, w);
  g.tiles.dead += dead;
  const bool skip = dead && args.sched.skip_dead_tiles;
  if (!skip) backward_dout_v(args, kc, i0, mq, w);  // G = dO V^T
  std::fill(w.diag.begin(), w.diag.end(), T(0));
  const int64_t d_min = i0 - (kc.j0 + kc.nk - 1);  // the tile's smallest distance i - j
  backward_score_grads(args, kc, i0, mq, skip, d_min, w, g);
  for (int64_t x = 0; x < mq + kc.nk - 1; ++x)  // atomic adds on the GPU
    if (d_min + x >= 0) dist[d_min + x] += w.diag[x];
}

// One backward CTA: key tile kt of head bh, owning dK and dV of its keys; it visits the query
// tiles from the diagonal one to the last. `dist` is the head's distance vector [T].
template <typename T>
void backward_key_tile(const BackwardArgs<T>& args, int64_t bh, int64_t kt,
                       BackwardWorkspace<T>& w, T* dist, FamilyGradients<T>& g) {
  const int64_t T_len = args.in.T_len, D = args.in.D;
  const int64_t Br = args.sched.block_q, Bc = args.sched.block_k, j0 = kt * Bc;
  const KeyTileCta kc{bh, bh * T_len * D, j0, std::min(Bc, T_len - j0)};
  std::fill(w.dk_acc.begin(), w.dk_acc.end(), T(0));
  std::fill(w.dv_acc.begin(), w.dv_acc.end(), T(0));
  for (int64_t it = first_query_tile(j0, Br); it < tile_count(T_len, Br); ++it)
    backward_tile(args, kc, it, w, dist, g);
  for (int64_t x = 0; x < kc.nk * D; ++x) {
    g.dk[kc.off + j0 * D + x] = w.dk_acc[x] * args.scale;
    g.dv[kc.off + j0 * D + x] = w.dv_acc[x];
  }
}

// Reduction: dtau from dt (/ n_i; summed over b and i per head).
template <typename T>
void reduce_dtau(const FamilyInputs<T>& in, FamilyGradients<T>& g) {
  const int64_t B = in.B, H = in.H, T_len = in.T_len;
  g.dtau.assign(in.tau_per_token ? B * T_len * H : H, T(0));
  for (int64_t bh = 0; bh < B * H; ++bh)
    for (int64_t i = 0; i < T_len; ++i) {
      const int64_t b = bh / H, h = bh % H;
      const T d = tau_grad(g.dthresh[bh * T_len + i], i, in.tau_over_len);
      if (in.tau_per_token)
        g.dtau[(b * T_len + i) * H + h] = d;
      else
        g.dtau[h] += d;
    }
}

// Reduction: the distance vectors summed over b, then the distance-bias gradient [H, W] and the
// ALiBi slope gradient from them.
template <typename T>
void reduce_distance_grads(const FamilyInputs<T>& in, const std::vector<T>& dist,
                           FamilyGradients<T>& g) {
  const int64_t B = in.B, H = in.H, T_len = in.T_len;
  g.dbias_distance.assign(H * T_len, T(0));
  for (int64_t bh = 0; bh < B * H; ++bh)
    for (int64_t d = 0; d < T_len; ++d)
      g.dbias_distance[(bh % H) * T_len + d] += dist[bh * T_len + d];
  if (in.distance_bias) {
    const int64_t W = in.bias_window;
    g.ddistance_bias.assign(H * W, T(0));  // distances >= T never occur: no gradient
    for (int64_t h = 0; h < H; ++h)
      for (int64_t d = 0; d < std::min(W, T_len); ++d)
        g.ddistance_bias[h * W + d] = g.dbias_distance[h * T_len + d];
  }
  if (in.alibi_slopes) {  // d(-slope d)/dslope = -d
    g.dalibi_slopes.assign(H, T(0));
    for (int64_t h = 0; h < H; ++h)
      for (int64_t d = 0; d < T_len; ++d)
        g.dalibi_slopes[h] -= static_cast<T>(d) * g.dbias_distance[h * T_len + d];
  }
}

}  // namespace schedule_detail

template <typename T>
ForwardSaved<T> emulate_forward(const FamilyInputs<T>& in, const TileSchedule& sched) {
  using namespace schedule_detail;
  ForwardSaved<T> f = allocate_forward(in, sched);
  ForwardWorkspace<T> w(sched.block_q, sched.block_k, in.D);
  for (int64_t bh = 0; bh < in.B * in.H; ++bh)
    for (int64_t it = 0; it < f.n_qtiles; ++it)  // one CTA
      forward_query_tile(in, sched, bh, it, w, f);
  return f;
}

// `dout` [B, H, T, D] is dl/do.
template <typename T>
FamilyGradients<T> emulate_backward(const FamilyInputs<T>& in, const ForwardSaved<T>& f,
                                    const T* dout, const TileSchedule& sched) {
  using namespace schedule_detail;
  const int64_t B = in.B, H = in.H, T_len = in.T_len, D = in.D;
  FamilyGradients<T> g;
  g.dq.assign(B * H * T_len * D, T(0));
  g.dk.assign(B * H * T_len * D, T(0));
  g.dv.assign(B * H * T_len * D, T(0));

  const BackwardRows<T> rows = backward_preprocess(in, f, dout, sched, g);

  // Main: one CTA per (b, h, key tile).
  const T scale = T(1) / static_cast<T>(::sqrt(static_cast<double>(D)));
  const BackwardArgs<T> args{in, f, dout, sched, rows, scale};
  std::vector<T> dist(B * H * T_len, T(0));  // per (b, h): sum of dS at each distance d
  BackwardWorkspace<T> w(sched.block_q, sched.block_k, D);
  for (int64_t bh = 0; bh < B * H; ++bh)
    for (int64_t kt = 0; kt < tile_count(T_len, sched.block_k); ++kt)  // one CTA
      backward_key_tile(args, bh, kt, w, dist.data() + bh * T_len, g);

  // Reduction.
  if (in.elastic) reduce_dtau(in, g);
  reduce_distance_grads(in, dist, g);
  return g;
}

}  // namespace attnbench::kernels::gpu
