#include "kernels/cpu/vocab_scores.h"

#include <ATen/Parallel.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/cpu/row_reduce.h"
#include "kernels/cpu/tile_gemm.h"

namespace attnbench::kernels::cpu {
namespace {

// The statistics of one row over one block of columns: its maximum m, the first column holding it
// and sum_j exp(x_j - m). Blocks are merged in column order.
struct Partial {
  float max = -std::numeric_limits<float>::infinity();
  int64_t argmax = 0;
  double sum = 0;
};

Partial reduce_row(const float* x, int64_t n, int64_t col0) {
  Partial p;
  p.max = row_max(x, n);
  int64_t first = 0;
  if (p.max > -std::numeric_limits<float>::infinity()) {
    while (x[first] != p.max) ++first;
  }
  p.argmax = col0 + first;
  p.sum = sum_exp(x, n, p.max);
  return p;
}

// The pairs of each column block.
std::vector<std::vector<int64_t>> pairs_by_block(const int64_t* rows, const int64_t* cols, int64_t P,
                                                 int64_t R, int64_t V) {
  std::vector<std::vector<int64_t>> out(static_cast<size_t>((V + kVocabColumns - 1) / kVocabColumns));
  for (int64_t p = 0; p < P; ++p) {
    if (rows[p] < 0 || rows[p] >= R || cols[p] < 0 || cols[p] >= V) {
      throw std::out_of_range("vocab_row_stats: pair " + std::to_string(p) + " (row " +
                              std::to_string(rows[p]) + ", column " + std::to_string(cols[p]) +
                              ") is outside [" + std::to_string(R) + ", " + std::to_string(V) +
                              ")");
    }
    out[static_cast<size_t>(cols[p] / kVocabColumns)].push_back(p);
  }
  return out;
}

// Merges a row's block statistics in column order: the first maximum, and the log-sum-exp.
void merge(const Partial* blocks, int64_t n, double& lse, int64_t& argmax) {
  Partial best = blocks[0];
  for (int64_t c = 1; c < n; ++c)
    if (blocks[c].max > best.max) best = blocks[c];  // strictly: a tie keeps the earlier column
  double sum = 0;
  for (int64_t c = 0; c < n; ++c)
    sum += blocks[c].sum * std::exp(static_cast<double>(blocks[c].max) - best.max);
  lse = static_cast<double>(best.max) + std::log(sum);
  argmax = best.argmax;
}

}  // namespace

VocabRowStats vocab_row_stats(const float* states, int64_t R, int64_t C, const float* weight,
                              int64_t V, const int64_t* pair_rows, const int64_t* pair_cols,
                              int64_t P) {
  const int64_t blocks = (V + kVocabColumns - 1) / kVocabColumns;
  const auto pairs = pairs_by_block(pair_rows, pair_cols, P, R, V);
  std::vector<Partial> partial(static_cast<size_t>(R * blocks));  // [R, blocks]
  std::vector<float> logits(static_cast<size_t>(R * std::min(kVocabColumns, V)));
  VocabRowStats out;
  out.picked.resize(static_cast<size_t>(P));
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t c0 = b * kVocabColumns, n = std::min(kVocabColumns, V - c0);
    gemm_nt<float>(TileGemm::Blas, R, n, C, 1.0f, states, C, weight + c0 * C, C, 0.0f,
                   logits.data(), n);
    // Each row is reduced by one thread: the result does not depend on the number of threads.
    at::parallel_for(0, R, 16, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r)
        partial[static_cast<size_t>(r * blocks + b)] = reduce_row(logits.data() + r * n, n, c0);
    });
    for (int64_t p : pairs[static_cast<size_t>(b)])
      out.picked[static_cast<size_t>(p)] =
          logits[static_cast<size_t>(pair_rows[p] * n + pair_cols[p] - c0)];
  }
  out.lse.resize(static_cast<size_t>(R));
  out.argmax.resize(static_cast<size_t>(R));
  for (int64_t r = 0; r < R; ++r)
    merge(partial.data() + r * blocks, blocks, out.lse[static_cast<size_t>(r)],
          out.argmax[static_cast<size_t>(r)]);
  return out;
}

}  // namespace attnbench::kernels::cpu
