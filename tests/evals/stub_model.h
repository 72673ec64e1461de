// A LanguageModel with known log-probabilities for the scoring tests: the next-token distribution
// depends only on the current token (a bigram table given as probabilities), and logits are their
// logarithms, so log_softmax(logits) = log p exactly. It records every input row it is given.
#pragma once
#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <vector>

#include "evals/language_model.h"

namespace attnbench::evals::testing {

class BigramStub : public LanguageModel {
 public:
  // prob(current, next): p(next | current); rows must sum to 1 over [0, vocab).
  BigramStub(int64_t vocab, int64_t max_length, std::function<double(int64_t, int64_t)> prob)
      : vocab_(vocab), max_length_(max_length), prob_(std::move(prob)) {}
  int64_t max_length() const override { return max_length_; }
  int64_t vocab_size() const override { return vocab_; }
  torch::Tensor logits(const torch::Tensor& tokens) override {
    const int64_t B = tokens.size(0), T = tokens.size(1);
    // One padding column beyond the vocabulary, with a huge logit: it must be ignored.
    torch::Tensor out = torch::empty({B, T, vocab_ + 1}, torch::kFloat32);
    auto o = out.accessor<float, 3>();
    auto in = tokens.accessor<int64_t, 2>();
    for (int64_t b = 0; b < B; ++b) {
      std::vector<int64_t> row;
      for (int64_t t = 0; t < T; ++t) {
        row.push_back(in[b][t]);
        for (int64_t v = 0; v < vocab_; ++v) {
          o[b][t][v] = static_cast<float>(std::log(prob_(in[b][t], v)));
        }
        o[b][t][vocab_] = 100.0f;
      }
      rows.push_back(row);
    }
    ++calls;
    return out;
  }
  std::vector<std::vector<int64_t>> rows;  // every row received, padding included
  int calls = 0;

 private:
  int64_t vocab_, max_length_;
  std::function<double(int64_t, int64_t)> prob_;
};

}  // namespace attnbench::evals::testing
