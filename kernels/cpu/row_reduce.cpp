#include "kernels/cpu/row_reduce.h"

#include <cstring>
#include <limits>

#include "kernels/cpu/fast_exp.h"

// Written on GCC's vector extension and compiled twice (target_clones): the baseline clone alone is
// an order of magnitude slower than the AVX2 one (measured 4.1 against 0.34 ns per element of
// sum_exp on 50k-float rows). Elsewhere (another compiler or CPU family) they compile once.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define ATTNBENCH_CPU_CLONES __attribute__((target_clones("default", "arch=x86-64-v3")))
#else
#define ATTNBENCH_CPU_CLONES
#endif

namespace attnbench::kernels::cpu {
namespace {

typedef float Floats __attribute__((vector_size(32)));
typedef int32_t Ints __attribute__((vector_size(32)));
constexpr int64_t kLanes = sizeof(Floats) / sizeof(float);

Floats load(const float* x) {
  Floats v;
  std::memcpy(&v, x, sizeof v);
  return v;
}

}  // namespace

ATTNBENCH_CPU_CLONES
float row_max(const float* x, int64_t n) {
  Floats m = Floats{} - std::numeric_limits<float>::infinity();
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    const Floats v = load(x + j);
    m = v > m ? v : m;
  }
  float out = -std::numeric_limits<float>::infinity();
  for (int64_t l = 0; l < kLanes; ++l) out = m[l] > out ? m[l] : out;
  for (; j < n; ++j) out = x[j] > out ? x[j] : out;
  return out;
}

ATTNBENCH_CPU_CLONES
double sum_exp(const float* x, int64_t n, float shift) {
  Floats acc = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) acc += exp_poly<Floats, Ints>(load(x + j) - shift);
  double s = 0;
  for (int64_t l = 0; l < kLanes; ++l) s += acc[l];
  for (; j < n; ++j) s += fast_expf(x[j] - shift);
  return s;
}

ATTNBENCH_CPU_CLONES
void exp_inplace(float* x, int64_t n) {
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    const Floats v = exp_poly<Floats, Ints>(load(x + j));
    std::memcpy(x + j, &v, sizeof v);
  }
  for (; j < n; ++j) x[j] = fast_expf(x[j]);
}

ATTNBENCH_CPU_CLONES
void exp_shifted_scaled(float* x, int64_t n, float shift, float scale) {
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    const Floats v = exp_poly<Floats, Ints>(load(x + j) - shift) * scale;
    std::memcpy(x + j, &v, sizeof v);
  }
  for (; j < n; ++j) x[j] = fast_expf(x[j] - shift) * scale;
}

}  // namespace attnbench::kernels::cpu
