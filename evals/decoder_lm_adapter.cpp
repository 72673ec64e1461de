#include "evals/decoder_lm_adapter.h"

namespace attnbench::evals {

namespace {
using Model = std::shared_ptr<model::CausalLMImpl>;

// The hidden states h [B, S, C] at `positions` [N, 2] (b, s): [N, C].
torch::Tensor states_at(const torch::Tensor& h, const torch::Tensor& positions) {
  const torch::Tensor p = positions.to(h.device());
  return h.index({p.select(1, 0), p.select(1, 1)});
}

// The head on hidden states [N, C], as float32 [N, V'] (scores are read in float32 whatever the
// model computes in).
torch::Tensor head_logits(const Model& m, const torch::Tensor& states) {
  return m->head(states).to(torch::kFloat32);
}

class CachedDecoding : public DecodingState {
 public:
  CachedDecoding(Model model, torch::Device device, model::DecoderCache cache = {})
      : model_(std::move(model)), device_(device), cache_(std::move(cache)) {}
  int64_t length() const override { return cache_.length(); }
  torch::Tensor feed_states(const torch::Tensor& tokens, const torch::Tensor& positions) override {
    torch::NoGradGuard no_grad;
    return states_at(model_->hidden(tokens.to(device_), &cache_), positions);
  }
  torch::Tensor logits(const torch::Tensor& states) override {
    torch::NoGradGuard no_grad;
    return head_logits(model_, states.to(device_));
  }
  TokenScores score_tokens(const torch::Tensor& states, const torch::Tensor& rows,
                           const torch::Tensor& targets, int64_t vocab) override {
    return head_token_scores(states.to(device_), model_->head_weight(), rows, targets, vocab);
  }
  std::unique_ptr<DecodingState> select(const std::vector<int64_t>& rows) const override {
    return std::make_unique<CachedDecoding>(model_, device_,
                                            cache_.select(torch::tensor(rows, torch::kInt64)));
  }

 private:
  Model model_;
  torch::Device device_;
  model::DecoderCache cache_;
};
}  // namespace

DecoderLMAdapter::DecoderLMAdapter(Model model, int64_t max_length)
    : model_(std::move(model)),
      shape_(model_->shape()),
      max_length_(model::scoring_length(shape_, max_length, "max_length")),
      device_(model_->device()) {
  model_->eval();
}

torch::Tensor DecoderLMAdapter::logits(const torch::Tensor& tokens) {
  torch::NoGradGuard no_grad;
  // Scores are read in float32 whatever the model computes in (lm-eval runs fp32 models here).
  return model_->head(model_->hidden(tokens.to(device_))).to(torch::kFloat32);
}

torch::Tensor DecoderLMAdapter::logits_at(const torch::Tensor& tokens,
                                          const torch::Tensor& positions) {
  torch::NoGradGuard no_grad;
  return head_logits(model_, states_at(model_->hidden(tokens.to(device_)), positions));
}

std::unique_ptr<DecodingState> DecoderLMAdapter::start_decoding() {
  return std::make_unique<CachedDecoding>(model_, device_);
}

}  // namespace attnbench::evals
