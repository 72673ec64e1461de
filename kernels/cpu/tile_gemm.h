// Small dense products on row-major tiles, the inner loops of the fused CPU attention kernels.
// Three implementations, selectable so that bench/attention.cpp can measure them against each other
// (docs/kernels.md records which one wins and by how much):
//   Loops      plain loops in axpy order that the compiler auto-vectorises,
//   Vectorized ATen's at::vec::Vectorized<scalar_t> with explicit fused multiply-adds,
//   Blas       the Fortran BLAS (sgemm_/dgemm_) that LibTorch itself is linked against, found with
//              dlsym so that no extra link dependency is needed; absent -> blas_available() false.
#pragma once
#include <cstdint>

namespace attnbench::kernels::cpu {

enum class TileGemm { Loops, Vectorized, Blas };

const char* tile_gemm_name(TileGemm g);
bool blas_available();
// The measured winner (docs/kernels.md), or Loops where the BLAS symbols are missing.
TileGemm default_tile_gemm();

// All matrices row-major with leading dimensions (row strides) lda, ldb, ldc; beta is 0 or 1.
// C[m,n] = alpha * A[m,k] * B[n,k]^T + beta * C
template <typename T>
void gemm_nt(TileGemm g, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
             const T* b, int64_t ldb, T beta, T* c, int64_t ldc);
// C[m,n] = alpha * A[m,k] * B[k,n] + beta * C
template <typename T>
void gemm_nn(TileGemm g, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
             const T* b, int64_t ldb, T beta, T* c, int64_t ldc);
// C[m,n] = alpha * A[k,m]^T * B[k,n] + beta * C
template <typename T>
void gemm_tn(TileGemm g, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
             const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

}  // namespace attnbench::kernels::cpu
