// Incremental decoding for any LanguageModel: the model's own cache when it has one
// (LanguageModel::start_decoding), else RecomputeDecoding, which keeps the token rows and runs
// every row in full at each feed. The two give the same logits (a test holds the model's cache to
// the recomputation).
#pragma once
#include <memory>

#include "evals/language_model.h"

namespace attnbench::evals {

class RecomputeDecoding : public DecodingState {
 public:
  explicit RecomputeDecoding(LanguageModel& model) : model_(model) {}
  int64_t length() const override { return tokens_.defined() ? tokens_.size(1) : 0; }
  // The logits themselves (logits() is the identity).
  torch::Tensor feed_states(const torch::Tensor& tokens, const torch::Tensor& positions) override;
  std::unique_ptr<DecodingState> select(const std::vector<int64_t>& rows) const override;

 private:
  LanguageModel& model_;
  torch::Tensor tokens_;  // [B, length()] int64 on the CPU
};

// model.start_decoding(), or a RecomputeDecoding over `model` when it has no cache.
std::unique_ptr<DecodingState> start_decoding(LanguageModel& model);

}  // namespace attnbench::evals
