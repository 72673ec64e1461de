// What the evaluation needs from a model: next-token logits for a batch of token rows. Implemented
// over model::DecoderLM (decoder_lm_adapter.h) and by stub models with known log-probabilities in
// tests.
#pragma once
#include <torch/torch.h>

#include <cstdint>

namespace attnbench::evals {

class LanguageModel {
 public:
  virtual ~LanguageModel() = default;
  // The longest input the model accepts (lm-eval's max_length): inputs are left-truncated to it.
  virtual int64_t max_length() const = 0;
  // The real vocabulary size. Logits may have more columns (a padded embedding); log_softmax is
  // taken over the first vocab_size() of them, so padding never takes probability mass.
  virtual int64_t vocab_size() const = 0;
  // tokens [B, T] int64 (right-padded; rows never look at later positions) -> logits [B, T, >= V]
  // float, logits[b, t] predicting token t + 1.
  virtual torch::Tensor logits(const torch::Tensor& tokens) = 0;
  // Logits at selected positions only: `positions` [N, 2] int64 rows (b, t) -> [N, >= V]. Scoring
  // reads a few continuation positions per row, so a model may skip the vocabulary projection
  // everywhere else (it is most of a small model's FLOPs). Default: slice logits().
  virtual torch::Tensor logits_at(const torch::Tensor& tokens, const torch::Tensor& positions) {
    torch::Tensor all = logits(tokens);
    return all.index({positions.select(1, 0), positions.select(1, 1)});
  }
};

}  // namespace attnbench::evals
