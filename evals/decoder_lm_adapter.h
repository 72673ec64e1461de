// LanguageModel over attnbench's own model::DecoderLM: max_length = model.context_length, logits
// over the padded vocabulary of which the first model.vocab_size are real tokens. logits_at runs
// the trunk (DecoderLMImpl::hidden) and applies the head to the requested positions only; a test
// checks it against forward() so the two cannot drift apart. start_decoding keeps the model's
// per-layer KVCache (model::DecoderCache).
#pragma once
#include "core/config/run_config.h"
#include "evals/language_model.h"
#include "model/decoder.h"

namespace attnbench::evals {

class DecoderLMAdapter : public LanguageModel {
 public:
  // Puts the model in eval mode; forwards run without autograd on the model's device.
  DecoderLMAdapter(model::DecoderLM model, const config::ModelConfig& cfg);
  int64_t max_length() const override { return cfg_.context_length; }
  int64_t vocab_size() const override { return cfg_.vocab_size; }
  torch::Tensor logits(const torch::Tensor& tokens) override;
  // The decoder trunk on every position, the LM head only on `positions`.
  torch::Tensor logits_at(const torch::Tensor& tokens, const torch::Tensor& positions) override;
  std::unique_ptr<DecodingState> start_decoding() override;

 private:
  model::DecoderLM model_;
  config::ModelConfig cfg_;
  torch::Device device_;
};

}  // namespace attnbench::evals
