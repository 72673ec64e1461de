#include "kernels/cpu/tile_gemm.h"

#include <ATen/cpu/vec/vec.h>
#include <dlfcn.h>

#include <stdexcept>
#include <vector>

namespace attnbench::kernels::cpu {
namespace {

// Fortran BLAS ABI (LP64: 32-bit integers), as exported by the libblas.so.3 LibTorch is linked to.
template <typename T>
using FortranGemm = void (*)(const char*, const char*, const int*, const int*, const int*, const T*,
                             const T*, const int*, const T*, const int*, const T*, T*, const int*);

template <typename T>
FortranGemm<T> blas_gemm() {
  static const FortranGemm<T> fn =
      reinterpret_cast<FortranGemm<T>>(dlsym(RTLD_DEFAULT, sizeof(T) == 4 ? "sgemm_" : "dgemm_"));
  return fn;
}

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: the operands swap places and
// each row-major matrix is its own column-major transpose.
template <typename T>
void blas(char ta, char tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
          const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (!blas_gemm<T>())
    throw std::runtime_error("fused attention: no BLAS gemm symbol in this process");
  const int M = static_cast<int>(n), N = static_cast<int>(m), K = static_cast<int>(k);
  const int LDA = static_cast<int>(ldb), LDB = static_cast<int>(lda), LDC = static_cast<int>(ldc);
  blas_gemm<T>()(&tb, &ta, &M, &N, &K, &alpha, b, &LDA, a, &LDB, &beta, c, &LDC);
}

template <typename T>
void scale_rows(int64_t m, int64_t n, T beta, T* c, int64_t ldc) {
  if (beta == T(1)) return;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
}

// c[0:n] += s * b[0:n]: the axpy every loop strategy is built from.
template <typename T>
inline void axpy(TileGemm g, int64_t n, T s, const T* b, T* c) {
  using Vec = at::vec::Vectorized<T>;
  int64_t j = 0;
  switch (g) {  // no default: -Wswitch lists this site when an implementation is added
    case TileGemm::Vectorized: {
      const Vec vs(s);
      for (; j + Vec::size() <= n; j += Vec::size())
        at::vec::fmadd(vs, Vec::loadu(b + j), Vec::loadu(c + j)).store(c + j);
      break;
    }
    case TileGemm::Loops:
    case TileGemm::Blas:  // not reached: the gemm_* below call the BLAS directly
      break;
  }
  for (; j < n; ++j) c[j] += s * b[j];
}

// Whether `g` hands whole tile products to the BLAS (else the axpy loops below).
bool uses_blas(TileGemm g) {
  switch (g) {  // no default: -Wswitch lists this site when an implementation is added
    case TileGemm::Blas:
      return true;
    case TileGemm::Loops:
    case TileGemm::Vectorized:
      return false;
  }
  throw std::logic_error("unknown tile product implementation");
}

// C += alpha * A_elem(i, kk) * B[kk, :], with A_elem reading A or A^T.
template <typename T, typename AElem>
void axpy_gemm(TileGemm g, int64_t m, int64_t n, int64_t k, T alpha, AElem a_elem, const T* b,
               int64_t ldb, T beta, T* c, int64_t ldc) {
  scale_rows(m, n, beta, c, ldc);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t kk = 0; kk < k; ++kk) axpy(g, n, alpha * a_elem(i, kk), b + kk * ldb, c + i * ldc);
}

}  // namespace

const char* tile_gemm_name(TileGemm g) {
  switch (g) {
    case TileGemm::Loops:
      return "loops";
    case TileGemm::Vectorized:
      return "vectorized";
    case TileGemm::Blas:
      return "blas";
  }
  return "?";
}

bool blas_available() { return blas_gemm<float>() != nullptr && blas_gemm<double>() != nullptr; }

TileGemm default_tile_gemm() { return blas_available() ? TileGemm::Blas : TileGemm::Loops; }

template <typename T>
void gemm_nt(TileGemm g, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
             const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (uses_blas(g)) return blas<T>('N', 'T', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  // Transpose B once so that the inner loop runs along contiguous memory (a dot-product loop
  // would be a floating-point reduction, which the compiler must not reorder into SIMD lanes).
  thread_local std::vector<T> bt;
  bt.resize(static_cast<size_t>(k * n));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t kk = 0; kk < k; ++kk) bt[kk * n + j] = b[j * ldb + kk];
  axpy_gemm(
      g, m, n, k, alpha, [&](int64_t i, int64_t kk) { return a[i * lda + kk]; }, bt.data(), n, beta,
      c, ldc);
}

template <typename T>
void gemm_nn(TileGemm g, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
             const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (uses_blas(g)) return blas<T>('N', 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  axpy_gemm(
      g, m, n, k, alpha, [&](int64_t i, int64_t kk) { return a[i * lda + kk]; }, b, ldb, beta, c,
      ldc);
}

template <typename T>
void gemm_tn(TileGemm g, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
             const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (uses_blas(g)) return blas<T>('T', 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  axpy_gemm(
      g, m, n, k, alpha, [&](int64_t i, int64_t kk) { return a[kk * lda + i]; }, b, ldb, beta, c,
      ldc);
}

#define ATTNBENCH_TILE_GEMM(T)                                                                  \
  template void gemm_nt<T>(TileGemm, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*, \
                           int64_t, T, T*, int64_t);                                            \
  template void gemm_nn<T>(TileGemm, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*, \
                           int64_t, T, T*, int64_t);                                            \
  template void gemm_tn<T>(TileGemm, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*, \
                           int64_t, T, T*, int64_t);
ATTNBENCH_TILE_GEMM(float)
ATTNBENCH_TILE_GEMM(double)
#undef ATTNBENCH_TILE_GEMM

}  // namespace attnbench::kernels::cpu
