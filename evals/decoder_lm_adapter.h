// LanguageModel over a decoder (model/causal_lm.h: attnbench's own model::DecoderLM or an imported
// Hugging Face model): max_length = its context length or the length given (model::scoring_length), logits over its head's rows of which the
// first vocab_size are real tokens. logits_at runs the trunk (hidden) and applies the head to the
// requested positions only; a test checks it against forward() so the two cannot drift apart.
// start_decoding keeps the model's per-layer KVCache (model::DecoderCache).
#pragma once
#include <memory>

#include "evals/language_model.h"
#include "model/causal_lm.h"

namespace attnbench::evals {

class DecoderLMAdapter : public LanguageModel {
 public:
  // Puts the model in eval mode; forwards run without autograd on the model's device.
  // `max_length` > 0 scores at that length instead (checked by model::scoring_length).
  explicit DecoderLMAdapter(std::shared_ptr<model::CausalLMImpl> model, int64_t max_length = 0);
  int64_t max_length() const override { return max_length_; }
  int64_t trained_length() const override { return shape_.context_length; }
  int64_t vocab_size() const override { return shape_.vocab_size; }
  torch::Tensor logits(const torch::Tensor& tokens) override;
  // The decoder trunk on every position, the LM head only on `positions`.
  torch::Tensor logits_at(const torch::Tensor& tokens, const torch::Tensor& positions) override;
  std::unique_ptr<DecodingState> start_decoding() override;

 private:
  std::shared_ptr<model::CausalLMImpl> model_;
  model::LMShape shape_;
  int64_t max_length_;
  torch::Device device_;
};

}  // namespace attnbench::evals
