// Reductions along one row of float32 logits, the inner loops of the chunked vocabulary kernels
// (kernels/cpu/vocab_scores.h, model/lm_loss.h): vectorised on 8-float vectors and compiled for baseline x86-64 and
// for x86-64-v3 (AVX2 + FMA), the CPU choosing at load time.
#pragma once
#include <cstdint>

namespace attnbench::kernels::cpu {

// max_j x_j, ignoring NaN; -infinity for n = 0 or a row of NaN.
float row_max(const float* x, int64_t n);

// sum_j exp(x_j - shift) (fast_exp.h's polynomial, about 1 ulp per term): each vector lane sums
// n / 8 terms in float32, the lanes are added in float64. NaN when some x_j is NaN.
double sum_exp(const float* x, int64_t n, float shift);

// x_j <- exp(x_j - shift) * scale in place: a softmax row (shift its log-sum-exp), scaled.
void exp_shifted_scaled(float* x, int64_t n, float shift, float scale);

}  // namespace attnbench::kernels::cpu
