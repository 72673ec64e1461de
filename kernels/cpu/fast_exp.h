// x[0:n] <- exp(x[0:n]) in vectorised loops. glibc's expf is a call per element that GCC cannot
// vectorise without -ffast-math, and the softmax exponentials are the kernels' main cost besides the
// tile products. float: Cephes' expf reduction and degree-6 polynomial (about 1 ulp, far inside the
// 1e-5 tolerance); double keeps std::exp (fp64 is the accuracy reference, not the fast path).
#pragma once
#include <cmath>
#include <cstdint>

namespace attnbench::kernels::cpu {

inline void exp_inplace(double* x, int64_t n) {
  for (int64_t j = 0; j < n; ++j) x[j] = std::exp(x[j]);
}

// exp(x) elementwise for F = float (I = int32_t) or a GCC vector of floats (I the int vector of its
// size): one definition for the scalar loops below and the explicitly vectorised ones
// (row_logsumexp.cpp).
template <typename F, typename I>
inline F exp_poly(F x) {
  // Below -87.3 the result is (sub)normal-small; clamping keeps 2^n in the normal range.
  F v = x < -87.3f ? F{} - 87.3f : x;
  v = v > 88.3f ? F{} + 88.3f : v;
  // n = round(v / ln 2) by the 1.5 * 2^23 trick (plain adds, so the loop stays vectorisable).
  const F shifted = v * 1.44269504088896341f + 12582912.0f;
  const F fn = shifted - 12582912.0f;
  const I n_int = __builtin_bit_cast(I, shifted) - 0x4B400000;
  v = v - fn * 0.693359375f + fn * 2.12194440e-4f;  // Cody-Waite: ln 2 split in two parts
  const F z = v * v;
  F y = F{} + 1.9875691500e-4f;
  y = y * v + 1.3981999507e-3f;
  y = y * v + 8.3334519073e-3f;
  y = y * v + 4.1665795894e-2f;
  y = y * v + 1.6666665459e-1f;
  y = y * v + 5.0000001201e-1f;
  y = y * z + v + 1.0f;
  return y * __builtin_bit_cast(F, (n_int + 127) << 23);
}

inline float fast_expf(float x) { return exp_poly<float, int32_t>(x); }

// Vectorised explicitly (kernels/cpu/row_reduce.cpp): the auto-vectoriser leaves the clamp above
// as control flow at baseline x86-64.
void exp_inplace(float* x, int64_t n);

}  // namespace attnbench::kernels::cpu
