// The fused CUDA backward of the attention family (docs/kernels.md, "CUDA kernels"), the schedule
// kernels/cuda/family_schedule.h emulates:
//   rows  one warp per row: dO_i . o_i and dO_i . N_i, then delta_i, dt_i, c_i, u_i from the
//         forward's saved rowsum r_i and kept count n_i (family_math.cuh, elastic_row_grad): no
//         sweep over the keys;
//   main  one CTA per (b, h, 64-key tile), owning dK and dV of its keys in registers; it visits
//         the query tiles from the diagonal one to the last, recomputes S and p = exp(s - lse),
//         forms G = dO V^T (not on a dead tile), dS = p (M dA - delta) and A u in the element
//         pass, then dV += (A u)^T dO, dK += dS^T Q, and dQ += dS K by fp32 atomic adds; the
//         tile's dS summed along its 127 diagonals (shared-memory atomics) is added to the
//         (b, h) distance vector, the position-bias gradient.
// A dead tile (every weight 0) skips G and dV; dS = -p delta is not zero there, so dK and dQ are
// still formed.
#include <string>

#include "kernels/cuda/family_device.h"
#include "kernels/cuda/family_math.cuh"
#include "kernels/cuda/family_mma.cuh"

namespace attnbench::kernels::gpu {
namespace {

template <typename E, int D>
struct BackwardSmem {
  static constexpr int kLdE = D + kPad;
  static constexpr size_t k = 0;
  static constexpr size_t v = k + sizeof(E) * kBlockK * kLdE;
  static constexpr size_t q = v + sizeof(E) * kBlockK * kLdE;
  static constexpr size_t dout = q + sizeof(E) * kBlockQ * kLdE;
  static constexpr size_t s = dout + sizeof(E) * kBlockQ * kLdE;
  static constexpr size_t g = s + sizeof(float) * kBlockQ * kLdScore;
  static constexpr size_t p = g + sizeof(float) * kBlockQ * kLdScore;
  static constexpr size_t ds = p + sizeof(E) * kBlockQ * kLdWeight;
  static constexpr size_t bias = ds + sizeof(E) * kBlockQ * kLdWeight;
  static constexpr size_t diag = bias + sizeof(float) * 128;
  static constexpr size_t rows = diag + sizeof(float) * 128;  // lse, delta, c, u, t: [5, 64]
  static constexpr size_t bytes = rows + sizeof(float) * 5 * kBlockQ;
  // dQ, dK and dV are staged through S and G once they are read.
  static_assert(p - s >= sizeof(float) * kBlockQ * (D + 4), "staging fits in S and G");
};

// The per-row inputs of the main kernel, [B, H, T] each, in BackwardResults::rows.
enum RowField { kDelta = 0, kOffset = 1, kFactor = 2 };

struct BackwardArgs {
  DeviceProblem p;
  BackwardInputs in;
  BackwardResults r;
  float scale;  // 1 / sqrt(D)
};

template <typename E, int D>
__global__ void __launch_bounds__(kThreads) family_backward_rows_kernel(const BackwardArgs a) {
  const DeviceProblem& p = a.p;
  const int64_t n = p.B * p.H * p.T_len;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (kThreads / 32) + threadIdx.x / 32;
  if (row >= n) return;
  const int lane = threadIdx.x % 32;
  const E* dout = static_cast<const E*>(a.in.dout) + row * D;
  const E* out = static_cast<const E*>(a.in.out) + row * D;
  // A 16-bit forward saved o in fp32 too (family_cuda.cpp): delta_i = dO_i . o_i enters every dS_ij
  // of the row, and the output's rounding (2^-9 in bf16) is otherwise the largest term of dq's and
  // dk's error. Renormalising, c_i = dO_i . o_i also cancels against dO_i . N_i / n_i in dt_i and
  // against g_ij in dA_ij, amplified by u_i = 1 / r_i: o in fp32 halves the 16-bit error of dtau.
  const float* out_f32 = a.in.out_f32 ? a.in.out_f32 + row * D : nullptr;
  float dot_out = 0.f, dot_kept = 0.f;
  for (int d = lane; d < D; d += 32) {
    const float g = to_float(dout[d]);
    dot_out += g * (out_f32 ? out_f32[d] : to_float(out[d]));
    if (p.elastic) dot_kept += g * a.in.kept_v_sum[row * D + d];
  }
  for (int x = 16; x >= 1; x >>= 1) {
    dot_out += __shfl_xor_sync(0xffffffffu, dot_out, x);
    dot_kept += __shfl_xor_sync(0xffffffffu, dot_kept, x);
  }
  if (lane != 0) return;
  const float rowsum = a.in.rowsum[row];
  const RowGrad<float> rg =
      p.elastic ? elastic_row_grad(dot_out, dot_kept, rowsum, a.in.kept_count[row],
                                   p.thresh[row], p.renormalize)
                : softmax_row_grad(dot_out, p.renormalize);
  a.r.rows[kDelta * n + row] = rg.delta;
  a.r.rows[kOffset * n + row] = renorm_offset(dot_out, p.renormalize);
  a.r.rows[kFactor * n + row] = renorm_factor(rowsum, p.renormalize);
  if (p.elastic) a.r.dthresh[row] = rg.dt;
}

// Shared row values of the current query tile.
struct TileRows {
  float *lse, *delta, *c, *u, *t;
};

// Loads query tile i0's Q, dO, per-row values and the tile's bias; clears the diagonal sums.
template <typename E, int D>
__device__ inline void load_query_tile(const BackwardArgs& a, int64_t bh, int64_t i0, int mq,
                                       int64_t j0, unsigned char* smem, const TileRows& tr) {
  using L = BackwardSmem<E, D>;
  const DeviceProblem& p = a.p;
  const int64_t T = p.T_len, n = p.B * p.H * T, base = bh * T * D;
  load_rows<E, D>(reinterpret_cast<E*>(smem + L::q), static_cast<const E*>(p.q) + base, i0, mq);
  load_rows<E, D>(reinterpret_cast<E*>(smem + L::dout), static_cast<const E*>(a.in.dout) + base,
                  i0, mq);
  const float* bias_h = p.bias ? p.bias + (bh % p.H) * T : nullptr;
  load_bias(reinterpret_cast<float*>(smem + L::bias), bias_h, i0 - j0 - (kBlockK - 1), T);
  float* diag = reinterpret_cast<float*>(smem + L::diag);
  for (int x = threadIdx.x; x < kTileDistances; x += kThreads) diag[x] = 0.f;
  if (threadIdx.x < mq) {
    const int64_t row = bh * T + i0 + threadIdx.x;
    tr.lse[threadIdx.x] = a.in.lse[row];
    tr.delta[threadIdx.x] = a.r.rows[kDelta * n + row];
    tr.c[threadIdx.x] = a.r.rows[kOffset * n + row];
    tr.u[threadIdx.x] = a.r.rows[kFactor * n + row];
    tr.t[threadIdx.x] = p.elastic ? p.thresh[row] : 0.f;
  }
}

// s_ij of the thread's 16 entries (row x / 4, columns x % 4 + 4 m), -inf where masked.
__device__ inline void tile_scores(const float* s_s, const float* bias_s, int r, int quad, int vis,
                                   float scale, float (&s)[16]) {
#pragma unroll
  for (int m = 0; m < 16; ++m) {
    const int col = quad + 4 * m;
    s[m] = col < vis ? score(s_s[r * kLdScore + col], scale, bias_s[r - col + kBlockK - 1])
                     : -INFINITY;
  }
}

// Whether any of the thread's entries is alive (its weight can be non-zero).
__device__ inline bool any_alive(const float (&s)[16], float lse, float t) {
  const float bound = dead_score_bound(lse, t);
  bool alive = false;
#pragma unroll
  for (int m = 0; m < 16; ++m) alive |= s[m] != -INFINITY && !row_dead(s[m], bound);
  return alive;
}

// The element pass: dS and A u into shared memory (0 where masked), dS along the diagonals.
template <typename E, int D>
__device__ inline void score_grads(const BackwardArgs& a, const float (&s)[16], int r, int quad,
                                   bool live, const TileRows& tr, unsigned char* smem) {
  using L = BackwardSmem<E, D>;
  const float* g_s = reinterpret_cast<const float*>(smem + L::g);
  E* p_s = reinterpret_cast<E*>(smem + L::p);
  E* ds_s = reinterpret_cast<E*>(smem + L::ds);
  float* diag = reinterpret_cast<float*>(smem + L::diag);
  const float lse = tr.lse[r], t = tr.t[r], u = tr.u[r];
#pragma unroll
  for (int m = 0; m < 16; ++m) {
    const int col = quad + 4 * m;
    float ds = 0.f, w = 0.f;
    if (s[m] != -INFINITY) {
      const float prob = softmax_prob(s[m], lse);
      const bool keep = !a.p.elastic || elastic_keep(prob, t);
      const float dA = live ? weight_grad(g_s[r * kLdScore + col], tr.c[r], u) : 0.f;
      ds = score_grad(prob, keep, dA, tr.delta[r]);
      w = (a.p.elastic ? elastic_weight(prob, t) : prob) * u;
      if (a.p.bias) atomicAdd(diag + (r - col + kBlockK - 1), ds);
    }
    p_s[r * kLdWeight + col] = from_float<E>(w);
    ds_s[r * kLdWeight + col] = from_float<E>(ds);
  }
}

// dQ of the query tile (dS K, staged in fp32) added to the global fp32 dQ, and the tile's diagonal
// sums to the distance vector.
template <typename E, int D>
__device__ inline void add_dq_and_bias(const BackwardArgs& a, int64_t bh, int64_t i0, int mq,
                                       int64_t j0, unsigned char* smem) {
  using L = BackwardSmem<E, D>;
  const int64_t T = a.p.T_len;
  Acc<E> dq[D / 32];
  zero<E, D>(dq);
  weights_product<E, wmma::row_major, D>(dq, reinterpret_cast<const E*>(smem + L::ds),
                                         reinterpret_cast<const E*>(smem + L::k));
  float* stage_s = reinterpret_cast<float*>(smem + L::s);
  stage<E, D>(dq, stage_s);  // S and G were last read before the barrier that preceded this
  __syncthreads();
  float* dq_g = a.r.dq + (bh * T + i0) * D;
  for (int x = threadIdx.x; x < mq * D; x += kThreads)
    atomicAdd(dq_g + x, stage_s[(x / D) * Stage<D>::kLd + x % D] * a.scale);
  if (!a.p.bias) return;
  const float* diag = reinterpret_cast<const float*>(smem + L::diag);
  const int64_t d_min = i0 - j0 - (kBlockK - 1);
  for (int x = threadIdx.x; x < kTileDistances; x += kThreads) {
    const int64_t d = d_min + x;
    if (d >= 0 && d < T) atomicAdd(a.r.dbias + bh * T + d, diag[x]);
  }
}

// One query tile of a key tile's CTA.
template <typename E, int D>
__device__ inline void query_tile(const BackwardArgs& a, int64_t bh, int64_t i0, int64_t j0,
                                  int nk, Acc<E> (&dk)[D / 32], Acc<E> (&dv)[D / 32],
                                  unsigned char* smem, const TileRows& tr) {
  using L = BackwardSmem<E, D>;
  const int mq = static_cast<int>(min64(kBlockQ, a.p.T_len - i0));
  __syncthreads();  // the previous query tile's readers are done
  load_query_tile<E, D>(a, bh, i0, mq, j0, smem, tr);
  __syncthreads();
  const E* q_s = reinterpret_cast<const E*>(smem + L::q);
  const E* dout_s = reinterpret_cast<const E*>(smem + L::dout);
  score_product<E, D>(q_s, reinterpret_cast<const E*>(smem + L::k),
                      reinterpret_cast<float*>(smem + L::s));
  __syncthreads();
  const int r = threadIdx.x >> 2, quad = threadIdx.x & 3;
  const int vis = r < mq ? visible_in_tile(i0 + r, j0, nk) : 0;
  float s[16];
  tile_scores(reinterpret_cast<const float*>(smem + L::s),
              reinterpret_cast<const float*>(smem + L::bias), r, quad, vis, a.scale, s);
  bool live = true;
  if (a.p.elastic && a.p.skip_dead_tiles)
    live = __syncthreads_or(vis > 0 && any_alive(s, tr.lse[r], tr.t[r]));
  if (live) {  // G = dO V^T
    score_product<E, D>(dout_s, reinterpret_cast<const E*>(smem + L::v),
                        reinterpret_cast<float*>(smem + L::g));
    __syncthreads();
  }
  score_grads<E, D>(a, s, r, quad, live, tr, smem);
  __syncthreads();
  if (live) weights_product<E, wmma::col_major, D>(dv, reinterpret_cast<const E*>(smem + L::p),
                                                   dout_s);
  weights_product<E, wmma::col_major, D>(dk, reinterpret_cast<const E*>(smem + L::ds), q_s);
  add_dq_and_bias<E, D>(a, bh, i0, mq, j0, smem);
}

template <typename E, int D>
__global__ void __launch_bounds__(kThreads) family_backward_kernel(const BackwardArgs a) {
  using L = BackwardSmem<E, D>;
  extern __shared__ __align__(128) unsigned char smem[];
  const int64_t T = a.p.T_len, bh = blockIdx.x, j0 = static_cast<int64_t>(blockIdx.y) * kBlockK;
  const int nk = static_cast<int>(min64(kBlockK, T - j0));
  const int64_t base = bh * T * D;
  load_rows<E, D>(reinterpret_cast<E*>(smem + L::k), static_cast<const E*>(a.p.k) + base, j0, nk);
  load_rows<E, D>(reinterpret_cast<E*>(smem + L::v), static_cast<const E*>(a.p.v) + base, j0, nk);
  float* rows = reinterpret_cast<float*>(smem + L::rows);
  const TileRows tr{rows, rows + kBlockQ, rows + 2 * kBlockQ, rows + 3 * kBlockQ,
                    rows + 4 * kBlockQ};
  Acc<E> dk[D / 32], dv[D / 32];
  zero<E, D>(dk), zero<E, D>(dv);
  const int64_t n_qt = (T + kBlockQ - 1) / kBlockQ;
  for (int64_t it = j0 / kBlockQ; it < n_qt; ++it)
    query_tile<E, D>(a, bh, it * kBlockQ, j0, nk, dk, dv, smem, tr);

  float* stage_s = reinterpret_cast<float*>(smem + L::s);
  __syncthreads();  // the last dQ atomics have read the staging tile
  stage<E, D>(dk, stage_s);
  __syncthreads();
  E* dk_g = static_cast<E*>(a.r.dk) + base + j0 * D;
  for (int x = threadIdx.x; x < nk * D; x += kThreads)
    dk_g[x] = from_float<E>(stage_s[(x / D) * Stage<D>::kLd + x % D] * a.scale);
  __syncthreads();
  stage<E, D>(dv, stage_s);
  __syncthreads();
  E* dv_g = static_cast<E*>(a.r.dv) + base + j0 * D;
  for (int x = threadIdx.x; x < nk * D; x += kThreads)
    dv_g[x] = from_float<E>(stage_s[(x / D) * Stage<D>::kLd + x % D]);
}

template <typename E, int D>
std::string launch_backward(const DeviceProblem& p, const BackwardInputs& in,
                            const BackwardResults& r, cudaStream_t stream) {
  using L = BackwardSmem<E, D>;
  const BackwardArgs a{p, in, r, 1.f / sqrtf(static_cast<float>(D))};
  const int64_t n = p.B * p.H * p.T_len, warps = kThreads / 32;
  family_backward_rows_kernel<E, D>
      <<<static_cast<unsigned>((n + warps - 1) / warps), kThreads, 0, stream>>>(a);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return std::string("rows: ") + cudaGetErrorString(err);
  const auto kernel = family_backward_kernel<E, D>;
  err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(L::bytes));
  if (err != cudaSuccess) return std::string("cudaFuncSetAttribute: ") + cudaGetErrorString(err);
  const dim3 grid(static_cast<unsigned>(p.B * p.H),
                  static_cast<unsigned>((p.T_len + kBlockK - 1) / kBlockK));
  kernel<<<grid, kThreads, L::bytes, stream>>>(a);
  err = cudaGetLastError();
  return err == cudaSuccess ? "" : std::string(cudaGetErrorString(err));
}

template <typename E>
std::string launch_backward_d(const DeviceProblem& p, const BackwardInputs& in,
                              const BackwardResults& r, cudaStream_t stream) {
  if (p.D == 64) return launch_backward<E, 64>(p, in, r, stream);
  if (p.D == 128) return launch_backward<E, 128>(p, in, r, stream);
  return "head dimension " + std::to_string(p.D) + " (64 or 128 expected)";
}

}  // namespace

std::string family_backward_cuda(const DeviceProblem& p, const BackwardInputs& in,
                                 const BackwardResults& r, cudaStream_t stream) {
  if (p.B * p.H * p.T_len == 0) return "";
  std::string err;
  switch (p.element) {  // no default: -Wswitch lists this site when an element type is added
    case Element::F32:
      err = launch_backward_d<float>(p, in, r, stream);
      break;
    case Element::F16:
      err = launch_backward_d<__half>(p, in, r, stream);
      break;
    case Element::BF16:
      err = launch_backward_d<__nv_bfloat16>(p, in, r, stream);
      break;
  }
  return err.empty() ? "" : "family_backward_kernel: " + err;
}

std::size_t family_backward_smem(Element e, int64_t D) {
  const bool wide = D == 128;
  switch (e) {
    case Element::F32:
      return wide ? BackwardSmem<float, 128>::bytes : BackwardSmem<float, 64>::bytes;
    case Element::F16:
      return wide ? BackwardSmem<__half, 128>::bytes : BackwardSmem<__half, 64>::bytes;
    case Element::BF16:
      return wide ? BackwardSmem<__nv_bfloat16, 128>::bytes
                  : BackwardSmem<__nv_bfloat16, 64>::bytes;
  }
  return 0;
}

}  // namespace attnbench::kernels::gpu
