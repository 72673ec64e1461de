// The pieces the fused CUDA kernels of the attention family build their tiles from
// (docs/kernels.md, "CUDA kernels"): element types, 16 x 16 tensor-core tile products through the
// WMMA API (mma.sync underneath), and tile loads from global into shared memory. Device code only,
// torch-free; included by kernels/cuda/family_forward.cu and family_backward.cu.
//
// Inputs are bf16, fp16 (one tensor-core product per 16 x 16 x 16 step) or fp32. fp32 runs on the
// tensor cores as three TF32 products (Ootomo & Yokota 2022, "3xTF32"): x = big + small with big =
// tf32(x), small = tf32(x - big), and A B ~ A_big B_big + A_big B_small + A_small B_big. TF32 keeps
// 10 mantissa bits, a single TF32 product errs by ~1e-3 relative; the split recovers ~fp32 accuracy,
// which the fp32 comparison with the eager reference (1e-4 relative) needs. Accumulation is fp32 in
// every case.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#include <stdint.h>

#include <type_traits>

namespace attnbench::kernels::gpu {

namespace wmma = nvcuda::wmma;

// Query rows and key columns per tile (the authors' Triton kernel and the CPU kernel use 64 x 64),
// and the threads of a CTA: 8 warps, warp w owning rows 16 (w % 4) .. + 15 of a 64-row product and
// half (w / 4) of its columns.
constexpr int kBlockQ = 64;
constexpr int kBlockK = 64;
constexpr int kThreads = 256;
constexpr int kWarpRows = 16;

// Padding of shared-memory rows: 8 elements keeps every WMMA fragment pointer 32-byte aligned (the
// API's requirement) and shifts consecutive rows across banks.
constexpr int kPad = 8;

template <typename E>
__device__ inline float to_float(E x);
template <>
__device__ inline float to_float<float>(float x) { return x; }
template <>
__device__ inline float to_float<__half>(__half x) { return __half2float(x); }
template <>
__device__ inline float to_float<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename E>
__device__ inline E from_float(float x);
template <>
__device__ inline float from_float<float>(float x) { return x; }
template <>
__device__ inline __half from_float<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// Tile products C (16 x 16, fp32) += A (16 x K) B (K x 16) on shared memory. LA/LB: wmma::row_major
// (element (r, c) at p[r * ld + c]) or wmma::col_major (at p[c * ld + r]), so that a transposed
// operand (K^T, P^T, dS^T) is read in place.
template <typename E, typename LA, typename LB>
struct TileMma {
  static constexpr int kStep = 16;
  using Acc = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;
  __device__ static void step(Acc& c, const E* a, int lda, const E* b, int ldb) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, E, LA> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, E, LB> fb;
    wmma::load_matrix_sync(fa, a, lda);
    wmma::load_matrix_sync(fb, b, ldb);
    wmma::mma_sync(c, fa, fb, c);
  }
};

// fp32: 3xTF32, the small terms first so that they are not lost against the big product.
template <typename LA, typename LB>
struct TileMma<float, LA, LB> {
  static constexpr int kStep = 8;
  using Acc = wmma::fragment<wmma::accumulator, 16, 16, 8, float>;
  template <typename Frag>
  __device__ static void split(Frag& big, Frag& small) {
    for (int t = 0; t < big.num_elements; ++t) {
      const float x = big.x[t];
      big.x[t] = wmma::__float_to_tf32(x);
      small.x[t] = wmma::__float_to_tf32(x - big.x[t]);
    }
  }
  __device__ static void step(Acc& c, const float* a, int lda, const float* b, int ldb) {
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, LA> a_big, a_small;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, LB> b_big, b_small;
    wmma::load_matrix_sync(a_big, a, lda);
    wmma::load_matrix_sync(b_big, b, ldb);
    split(a_big, a_small);
    split(b_big, b_small);
    wmma::mma_sync(c, a_small, b_big, c);
    wmma::mma_sync(c, a_big, b_small, c);
    wmma::mma_sync(c, a_big, b_big, c);
  }
};

// Where the K-slice [k0, k0 + step) of an operand starts: along the columns of a row-major A (or
// the rows of a col-major A), along the rows of a row-major B (the columns of a col-major B).
template <typename L>
__device__ inline int a_offset(int k0, int ld);
template <>
__device__ inline int a_offset<wmma::row_major>(int k0, int) { return k0; }
template <>
__device__ inline int a_offset<wmma::col_major>(int k0, int ld) { return k0 * ld; }
template <typename L>
__device__ inline int b_offset(int k0, int ld);
template <>
__device__ inline int b_offset<wmma::row_major>(int k0, int ld) { return k0 * ld; }
template <>
__device__ inline int b_offset<wmma::col_major>(int k0, int) { return k0; }

// C += A B over the whole inner dimension K (a multiple of the step). a points at A's (0, 0) of
// this 16-row block, b at B's (0, 0) of this 16-column block.
template <typename E, typename LA, typename LB, int K>
__device__ inline void tile_product(typename TileMma<E, LA, LB>::Acc& c, const E* a, int lda,
                                    const E* b, int ldb) {
  using M = TileMma<E, LA, LB>;
  // 3xTF32 holds four operand fragments per step: unrolled, fp32 at D = 128 spills.
  constexpr int kUnroll = M::kStep == 8 ? 1 : K / M::kStep;
#pragma unroll kUnroll
  for (int k0 = 0; k0 < K; k0 += M::kStep)
    M::step(c, a + a_offset<LA>(k0, lda), lda, b + b_offset<LB>(k0, ldb), ldb);
}

// Copies rows [row0, row0 + rows) of a [*, D] row-major global matrix into a [kBlockQ, D + kPad]
// shared tile, 16 bytes per load; rows beyond `rows` are zero-filled so that products over them
// are finite (their scores are masked). Global rows must be 16-byte aligned (the wrapper makes
// sure).
template <typename E, int D>
__device__ inline void load_rows(E* dst, const E* src, int64_t row0, int rows) {
  constexpr int kVec = 16 / sizeof(E), kPerRow = D / kVec;
  for (int x = threadIdx.x; x < kBlockQ * kPerRow; x += kThreads) {
    const int r = x / kPerRow, c = (x % kPerRow) * kVec;
    uint4 val = make_uint4(0, 0, 0, 0);
    if (r < rows) val = *reinterpret_cast<const uint4*>(src + (row0 + r) * D + c);
    *reinterpret_cast<uint4*>(dst + r * (D + kPad) + c) = val;
  }
}

// The per-tile score bias: bias_s[x] = bias_h(d_min + x) for the 2 * 64 - 1 distances i - j a
// 64 x 64 tile spans, from the host-computed table bias_h [T] (0 outside [0, T): a masked entry
// above the diagonal never reads the table before it).
constexpr int kTileDistances = kBlockQ + kBlockK - 1;
__device__ inline void load_bias(float* bias_s, const float* bias_h, int64_t d_min, int64_t T) {
  for (int x = threadIdx.x; x < kTileDistances; x += kThreads) {
    const int64_t d = d_min + x;
    bias_s[x] = (bias_h && d >= 0 && d < T) ? bias_h[d] : 0.f;
  }
}

// std::min is constexpr, which device code may call only under --expt-relaxed-constexpr.
__host__ __device__ inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// Row i sees keys j0 .. j0 + visible - 1 of the key tile at j0 (causal: j <= i).
__device__ inline int visible_in_tile(int64_t i, int64_t j0, int nk) {
  const int64_t n = i - j0 + 1;
  return n < 0 ? 0 : (n > nk ? nk : static_cast<int>(n));
}

// Leading dimensions of the shared tiles: fp32 scores (S, and G = dO V^T in the backward), 16-bit or
// fp32 weights (P, the ReLU mask M, dS), and fp32 staging of a [64, D] result.
constexpr int kLdScore = kBlockK + 4;
constexpr int kLdWeight = kBlockK + kPad;
template <int D>
struct Stage {
  static constexpr int kLd = D + 4;
};

template <typename E>
using Acc = typename TileMma<E, wmma::row_major, wmma::row_major>::Acc;

// This warp's block of a 64-row product: rows 16 (w % 4) .., and its half of the columns.
__device__ inline int warp_row0() { return (threadIdx.x / 32 % 4) * kWarpRows; }
__device__ inline int warp_half() { return threadIdx.x / 32 / 4; }

// S = A B^T for 64 x D tiles A and B in shared memory (ld D + kPad; B^T read in place as a
// col-major operand), into the fp32 s_s [64, kLdScore]: each warp its 16 rows x 32 columns.
template <typename E, int D>
__device__ inline void score_product(const E* a_s, const E* b_s, float* s_s) {
  constexpr int ld = D + kPad;
  const int r0 = warp_row0(), c0 = warp_half() * 32;
#pragma unroll
  for (int f = 0; f < 2; ++f) {
    Acc<E> c;
    wmma::fill_fragment(c, 0.f);
    tile_product<E, wmma::row_major, wmma::col_major, D>(c, a_s + r0 * ld, ld,
                                                        b_s + (c0 + 16 * f) * ld, ld);
    wmma::store_matrix_sync(s_s + r0 * kLdScore + c0 + 16 * f, c, kLdScore, wmma::mem_row_major);
  }
}

// C += A B with A 64 x 64 (weights in shared memory, ld kLdWeight; col_major reads A^T in place)
// and B a 64 x D tile (ld D + kPad); this warp's 16 rows x D / 2 columns, D / 32 fragments.
template <typename E, typename LA, int D>
__device__ inline void weights_product(Acc<E> (&c)[D / 32], const E* a_s, const E* b_s) {
  const int r0 = warp_row0(), c0 = warp_half() * (D / 2);
  const E* a = a_s + (std::is_same<LA, wmma::row_major>::value ? r0 * kLdWeight : r0);
#pragma unroll
  for (int f = 0; f < D / 32; ++f)
    tile_product<E, LA, wmma::row_major, kBlockK>(c[f], a, kLdWeight, b_s + c0 + 16 * f, D + kPad);
}

template <typename E, int D>
__device__ inline void zero(Acc<E> (&c)[D / 32]) {
#pragma unroll
  for (int f = 0; f < D / 32; ++f) wmma::fill_fragment(c[f], 0.f);
}

// The warp's fragments of a 64 x D fp32 result into the staging tile [64, Stage<D>::kLd].
template <typename E, int D>
__device__ inline void stage(const Acc<E> (&c)[D / 32], float* stage_s) {
  const int r0 = warp_row0(), c0 = warp_half() * (D / 2);
#pragma unroll
  for (int f = 0; f < D / 32; ++f)
    wmma::store_matrix_sync(stage_s + r0 * Stage<D>::kLd + c0 + 16 * f, c[f], Stage<D>::kLd,
                            wmma::mem_row_major);
}

// Reductions over the 4 threads that share a row in the element passes (lanes 4r .. 4r + 3).
__device__ inline float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

}  // namespace attnbench::kernels::gpu
