#include "evals/decoder_lm_adapter.h"

namespace attnbench::evals {

namespace {
torch::Device device_of(const model::DecoderLM& m) {
  auto params = m->parameters();
  return params.empty() ? torch::Device(torch::kCPU) : params.front().device();
}
}  // namespace

DecoderLMAdapter::DecoderLMAdapter(model::DecoderLM model, const config::ModelConfig& cfg)
    : model_(std::move(model)), cfg_(cfg), device_(device_of(model_)) {
  model_->eval();
}

torch::Tensor DecoderLMAdapter::logits(const torch::Tensor& tokens) {
  torch::NoGradGuard no_grad;
  // Scores are read in float32 whatever the model computes in (lm-eval runs fp32 models here).
  return model_->forward(tokens.to(device_)).to(torch::kFloat32);
}

torch::Tensor DecoderLMAdapter::logits_at(const torch::Tensor& tokens,
                                          const torch::Tensor& positions) {
  torch::NoGradGuard no_grad;
  torch::Tensor h = model_->embedding(tokens.to(device_));
  for (const auto& block : *model_->blocks) h = block->as<model::BlockImpl>()->forward(h);
  h = model_->final_norm(h);
  torch::Tensor p = positions.to(device_);
  h = h.index({p.select(1, 0), p.select(1, 1)});  // [N, C]
  torch::Tensor out = !model_->lm_head.is_empty()
                          ? model_->lm_head(h)
                          : torch::nn::functional::linear(h, model_->embedding->weight);
  return out.to(torch::kFloat32);
}

}  // namespace attnbench::evals
