// The fused CUDA forward of the attention family (docs/kernels.md, "CUDA kernels"): the tile
// schedule that kernels/cuda/family_schedule.h emulates, with the per-element math of
// family_math.cuh. One CTA of 256 threads per (b, h, 64-row query tile), launched longest rows
// first; key tiles from the diagonal down (FlashAttention-2's order), twice:
//   sweep 1  S = Q K^T / sqrt(D) + bias on the tensor cores, an online max and sum per row -> lse;
//   sweep 2  S again, p = exp(s - lse), a = ReLU(p + t) (Elastic) or p in fp32, O += A V and, for
//            Elastic, N += M V (M the ReLU mask, exact in 16 bits); a tile every row of which is
//            dead (family_math.cuh, dead_score_bound) skips its V load and both products.
// Two sweeps because ReLU(p + t) is not invariant to FlashAttention's online rescale; the output
// accumulator then never needs rescaling. Element passes: thread x owns row x / 4 and columns
// x % 4 + 4 m of the tile, so a row's reductions are over 4 adjacent lanes.
#include <string>

#include "kernels/cuda/family_device.h"
#include "kernels/cuda/family_math.cuh"
#include "kernels/cuda/family_mma.cuh"

namespace attnbench::kernels::gpu {
namespace {

template <typename E, int D>
struct ForwardSmem {
  static constexpr int kLdE = D + kPad;
  static constexpr size_t q = 0;
  static constexpr size_t k = q + sizeof(E) * kBlockQ * kLdE;
  static constexpr size_t v = k + sizeof(E) * kBlockK * kLdE;
  static constexpr size_t s = v + sizeof(E) * kBlockK * kLdE;
  static constexpr size_t p = s + sizeof(float) * kBlockQ * kLdScore;
  static constexpr size_t m = p + sizeof(E) * kBlockQ * kLdWeight;
  static constexpr size_t bias = m + sizeof(E) * kBlockQ * kLdWeight;
  static constexpr size_t u = bias + sizeof(float) * 128;
  static constexpr size_t bytes = u + sizeof(float) * kBlockQ;
  // The results are staged through the K and V tiles once both sweeps are done.
  static_assert(s - k >= sizeof(float) * kBlockQ * (D + 4), "staging fits in K and V");
};

struct ForwardArgs {
  DeviceProblem p;
  ForwardResults r;
  float scale;  // 1 / sqrt(D)
};

// The thread's row in the element passes: row r of the tile, columns quad + 4 m.
struct RowCtx {
  int r, quad;
  int64_t i;
  bool valid;
  float t;  // t_i (Elastic), else 0
};

__device__ inline RowCtx row_ctx(const DeviceProblem& p, int64_t bh, int64_t i0, int mq) {
  RowCtx c;
  c.r = threadIdx.x >> 2, c.quad = threadIdx.x & 3, c.i = i0 + c.r, c.valid = c.r < mq;
  c.t = p.elastic && c.valid ? p.thresh[bh * p.T_len + c.i] : 0.f;
  return c;
}

// s_ij of the thread's 16 entries of the tile at key j0, -inf where masked (causal, or a row past
// T). The bias index (i - j) - d_min = r - c + 63 for the tile's smallest distance d_min.
__device__ inline int scores(const RowCtx& c, const float* s_s, const float* bias_s, int64_t j0,
                             int nk, float scale, float (&s)[16]) {
  const int vis = c.valid ? visible_in_tile(c.i, j0, nk) : 0;
#pragma unroll
  for (int m = 0; m < 16; ++m) {
    const int col = c.quad + 4 * m;
    s[m] = col < vis ? score(s_s[c.r * kLdScore + col], scale, bias_s[c.r - col + kBlockK - 1])
                     : -INFINITY;
  }
  return vis;
}

// Loads the key tile at j0 and its bias, then S = Q K^T into s_s.
template <typename E, int D>
__device__ inline void key_tile_scores(const ForwardArgs& a, const E* k, const float* bias_h,
                                       int64_t i0, int64_t j0, int nk, unsigned char* smem) {
  using L = ForwardSmem<E, D>;
  __syncthreads();  // the previous tile's readers of K, V, S, P, M are done
  load_rows<E, D>(reinterpret_cast<E*>(smem + L::k), k, j0, nk);
  load_bias(reinterpret_cast<float*>(smem + L::bias), bias_h, i0 - j0 - (kBlockK - 1), a.p.T_len);
  __syncthreads();
  score_product<E, D>(reinterpret_cast<const E*>(smem + L::q),
                      reinterpret_cast<const E*>(smem + L::k), reinterpret_cast<float*>(smem + L::s));
  __syncthreads();
}

// Sweep 1: the row's lse, combined over its 4 threads (OnlineLse::merge is symmetric, so all four
// hold the same value).
template <typename E, int D>
__device__ float sweep_lse(const ForwardArgs& a, const RowCtx& c, const E* k, const float* bias_h,
                           int64_t i0, int n_kt, unsigned char* smem) {
  using L = ForwardSmem<E, D>;
  OnlineLse<float> st;
  for (int step = 0; step < n_kt; ++step) {
    const int64_t j0 = static_cast<int64_t>(n_kt - 1 - step) * kBlockK;
    const int nk = static_cast<int>(min64(kBlockK, a.p.T_len - j0));
    key_tile_scores<E, D>(a, k, bias_h, i0, j0, nk, smem);
    float s[16];
    const int vis = scores(c, reinterpret_cast<const float*>(smem + L::s),
                           reinterpret_cast<const float*>(smem + L::bias), j0, nk, a.scale, s);
    if (vis <= c.quad) continue;  // none of this thread's columns is visible
    float mx = -INFINITY;
#pragma unroll
    for (int m = 0; m < 16; ++m) mx = fmaxf(mx, s[m]);
    st.rescale(mx);
#pragma unroll
    for (int m = 0; m < 16; ++m)
      if (s[m] != -INFINITY) st.add(s[m]);
  }
  for (int lane = 1; lane <= 2; lane <<= 1) {
    OnlineLse<float> other;
    other.max = __shfl_xor_sync(0xffffffffu, st.max, lane);
    other.sum = __shfl_xor_sync(0xffffffffu, st.sum, lane);
    st.merge(other);
  }
  return st.lse();
}

// Sweep 2's element pass on one tile: weights and mask into P and M, the row's sums; whether any
// of the thread's entries is alive (above its row's dead-score bound).
template <typename E>
__device__ inline bool weights(const DeviceProblem& p, const RowCtx& c, const float (&s)[16],
                               float lse, float bound, E* p_s, E* m_s, float& rowsum,
                               float& kept) {
  bool alive = false;
#pragma unroll
  for (int m = 0; m < 16; ++m) {
    float w = 0.f, keep = 0.f;
    if (s[m] != -INFINITY) {
      const float prob = softmax_prob(s[m], lse);
      if (p.elastic) {
        w = elastic_weight(prob, c.t);
        keep = elastic_keep(prob, c.t) ? 1.f : 0.f;
        alive |= !row_dead(s[m], bound);
      } else {
        w = prob;
      }
    }
    const int at = c.r * kLdWeight + c.quad + 4 * m;
    const E w_e = from_float<E>(w);
    p_s[at] = w_e;
    if (p.elastic) m_s[at] = from_float<E>(keep);
    // r_i sums the weights as A V uses them, rounded to E, so that o_i = sum_j a_ij v_j / r_i is an
    // exact average: with one kept key o_i = v_j and the renormalised backward's
    // c_i n_i = dO_i . o_i cancels dO_i . N_i to 0, as the derivative does. Summing the fp32 weights
    // left o off by the weight's rounding (2^-9 in bf16), which u_i = 1 / r_i then amplified in dt_i
    // and dS: up to 1.3 relative error in dtau at r_i ~ 7e-4 on the H100.
    rowsum += to_float(w_e), kept += keep;
  }
  return alive;
}

// Writes a staged [mq, D] fp32 result, each row scaled by scale_s[row] (or 1 when null), as E.
template <typename E, typename Out, int D>
__device__ inline void write_rows(Out* dst, const float* stage_s, const float* scale_s, int rows) {
  for (int x = threadIdx.x; x < rows * D; x += kThreads) {
    const int r = x / D, col = x % D;
    const float val = stage_s[r * Stage<D>::kLd + col] * (scale_s ? scale_s[r] : 1.f);
    if constexpr (std::is_same<Out, float>::value) {
      dst[static_cast<int64_t>(r) * D + col] = val;
    } else {
      dst[static_cast<int64_t>(r) * D + col] = from_float<E>(val);
    }
  }
}

template <typename E, int D>
__global__ void __launch_bounds__(kThreads) family_forward_kernel(const ForwardArgs a) {
  using L = ForwardSmem<E, D>;
  extern __shared__ __align__(128) unsigned char smem[];
  const DeviceProblem& p = a.p;
  const int64_t T = p.T_len, bh = blockIdx.x;
  const int64_t i0 = static_cast<int64_t>(gridDim.y - 1 - blockIdx.y) * kBlockQ;
  const int mq = static_cast<int>(min64(kBlockQ, T - i0));
  const int n_kt = static_cast<int>((i0 + mq + kBlockK - 1) / kBlockK);
  const int64_t base = bh * T * D;
  const E* k = static_cast<const E*>(p.k) + base;
  const E* v = static_cast<const E*>(p.v) + base;
  const float* bias_h = p.bias ? p.bias + (bh % p.H) * T : nullptr;
  load_rows<E, D>(reinterpret_cast<E*>(smem + L::q), static_cast<const E*>(p.q) + base, i0, mq);
  const RowCtx c = row_ctx(p, bh, i0, mq);

  const float lse = sweep_lse<E, D>(a, c, k, bias_h, i0, n_kt, smem);
  const float bound = p.elastic ? dead_score_bound(lse, c.t) : -INFINITY;
  Acc<E> o[D / 32], n[D / 32];
  zero<E, D>(o), zero<E, D>(n);
  float rowsum = 0.f, kept = 0.f;
  for (int step = 0; step < n_kt; ++step) {
    const int64_t j0 = static_cast<int64_t>(n_kt - 1 - step) * kBlockK;
    const int nk = static_cast<int>(min64(kBlockK, T - j0));
    key_tile_scores<E, D>(a, k, bias_h, i0, j0, nk, smem);
    float s[16];
    scores(c, reinterpret_cast<const float*>(smem + L::s),
           reinterpret_cast<const float*>(smem + L::bias), j0, nk, a.scale, s);
    const bool alive = weights(p, c, s, lse, bound, reinterpret_cast<E*>(smem + L::p),
                               reinterpret_cast<E*>(smem + L::m), rowsum, kept);
    bool live = true;  // the vote is also the barrier after P and M are written
    if (p.elastic && p.skip_dead_tiles) {
      live = __syncthreads_or(alive);
    } else {
      __syncthreads();
    }
    if (!live) continue;  // a dead tile: no V load, no A V, no M V
    load_rows<E, D>(reinterpret_cast<E*>(smem + L::v), v, j0, nk);
    __syncthreads();
    weights_product<E, wmma::row_major, D>(o, reinterpret_cast<const E*>(smem + L::p),
                                           reinterpret_cast<const E*>(smem + L::v));
    if (p.elastic)
      weights_product<E, wmma::row_major, D>(n, reinterpret_cast<const E*>(smem + L::m),
                                             reinterpret_cast<const E*>(smem + L::v));
  }

  rowsum = quad_sum(rowsum), kept = quad_sum(kept);
  float* u_s = reinterpret_cast<float*>(smem + L::u);
  const int64_t row = bh * T + c.i;
  if (c.quad == 0 && c.valid) {
    a.r.lse[row] = lse;
    a.r.rowsum[row] = rowsum;
    if (p.elastic) a.r.kept_count[row] = kept;
    u_s[c.r] = renorm_factor(rowsum, p.renormalize);
  }
  float* stage_s = reinterpret_cast<float*>(smem + L::k);
  __syncthreads();  // the last tile's readers of K and V are done
  stage<E, D>(o, stage_s);
  __syncthreads();
  write_rows<E, E, D>(static_cast<E*>(a.r.out) + base + i0 * D, stage_s, u_s, mq);
  if (a.r.out_f32) write_rows<E, float, D>(a.r.out_f32 + base + i0 * D, stage_s, u_s, mq);
  if (!p.elastic) return;
  __syncthreads();
  stage<E, D>(n, stage_s);
  __syncthreads();
  write_rows<E, float, D>(a.r.kept_v_sum + base + i0 * D, stage_s, nullptr, mq);
}

template <typename E, int D>
std::string launch_forward(const DeviceProblem& p, const ForwardResults& r, cudaStream_t stream) {
  using L = ForwardSmem<E, D>;
  const auto kernel = family_forward_kernel<E, D>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(L::bytes));
  if (err != cudaSuccess) return std::string("cudaFuncSetAttribute: ") + cudaGetErrorString(err);
  const dim3 grid(static_cast<unsigned>(p.B * p.H),
                  static_cast<unsigned>((p.T_len + kBlockQ - 1) / kBlockQ));
  const ForwardArgs a{p, r, 1.f / sqrtf(static_cast<float>(D))};
  kernel<<<grid, kThreads, L::bytes, stream>>>(a);
  err = cudaGetLastError();
  return err == cudaSuccess ? "" : std::string(cudaGetErrorString(err));
}

template <typename E>
std::string launch_forward_d(const DeviceProblem& p, const ForwardResults& r,
                             cudaStream_t stream) {
  if (p.D == 64) return launch_forward<E, 64>(p, r, stream);
  if (p.D == 128) return launch_forward<E, 128>(p, r, stream);
  return "head dimension " + std::to_string(p.D) + " (64 or 128 expected)";
}

}  // namespace

std::string family_forward_cuda(const DeviceProblem& p, const ForwardResults& r,
                                cudaStream_t stream) {
  if (p.B * p.H * p.T_len == 0) return "";
  std::string err;
  switch (p.element) {  // no default: -Wswitch lists this site when an element type is added
    case Element::F32:
      err = launch_forward_d<float>(p, r, stream);
      break;
    case Element::F16:
      err = launch_forward_d<__half>(p, r, stream);
      break;
    case Element::BF16:
      err = launch_forward_d<__nv_bfloat16>(p, r, stream);
      break;
  }
  return err.empty() ? "" : "family_forward_kernel: " + err;
}

std::size_t family_forward_smem(Element e, int64_t D) {
  const bool wide = D == 128;
  switch (e) {
    case Element::F32:
      return wide ? ForwardSmem<float, 128>::bytes : ForwardSmem<float, 64>::bytes;
    case Element::F16:
      return wide ? ForwardSmem<__half, 128>::bytes : ForwardSmem<__half, 64>::bytes;
    case Element::BF16:
      return wide ? ForwardSmem<__nv_bfloat16, 128>::bytes
                  : ForwardSmem<__nv_bfloat16, 64>::bytes;
  }
  return 0;
}

}  // namespace attnbench::kernels::gpu
