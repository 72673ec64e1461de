// Row statistics of a vocabulary projection computed without materialising it: for states S [R, C]
// and a head weight W [V, C] (row-major float32), the logits L = S W^T are computed kVocabColumns
// vocabulary columns at a time (one BLAS product over all rows) and each block is reduced, rows in
// parallel, while it is in cache. What evaluation's scoring reads (evals/token_scores.h): per row
// log sum_j exp(L_rj) and the first argmax, per requested (row, column) pair the logit L_rc.
#pragma once
#include <cstdint>
#include <vector>

namespace attnbench::kernels::cpu {

// 4096 columns: 8 MB of logits for 512 rows. Measured (bench/eval_head.cpp, 512 rows, 2 threads)
// against 1024, 2048, 8192 and 16384: the fastest or within noise of it for C = 128 and 384.
constexpr int64_t kVocabColumns = 4096;

struct VocabRowStats {
  std::vector<double> lse;      // [R]: log sum_j exp(L_rj) over j < V (NaN when a logit is NaN)
  std::vector<int64_t> argmax;  // [R]: the first column holding the row's maximum
  std::vector<float> picked;    // [P]: L at (pair_rows[p], pair_cols[p])
};

// Throws std::out_of_range for a pair outside [R, V).
VocabRowStats vocab_row_stats(const float* states, int64_t R, int64_t C, const float* weight,
                              int64_t V, const int64_t* pair_rows, const int64_t* pair_cols,
                              int64_t P);

}  // namespace attnbench::kernels::cpu
