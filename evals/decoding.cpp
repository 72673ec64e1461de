#include "evals/decoding.h"

namespace attnbench::evals {

torch::Tensor RecomputeDecoding::feed_states(const torch::Tensor& tokens,
                                             const torch::Tensor& positions) {
  const torch::Tensor fed = tokens.to(torch::kCPU, torch::kInt64);
  tokens_ = tokens_.defined() ? torch::cat({tokens_, fed}, 1) : fed;
  torch::Tensor shifted = positions.to(torch::kCPU, torch::kInt64).clone();
  shifted.select(1, 1) += tokens_.size(1) - fed.size(1);  // positions of the new tokens
  return model_.logits_at(tokens_, shifted);
}

std::unique_ptr<DecodingState> RecomputeDecoding::select(const std::vector<int64_t>& rows) const {
  auto out = std::make_unique<RecomputeDecoding>(model_);
  if (tokens_.defined()) out->tokens_ = tokens_.index_select(0, torch::tensor(rows, torch::kInt64));
  return out;
}

std::unique_ptr<DecodingState> start_decoding(LanguageModel& model) {
  std::unique_ptr<DecodingState> state = model.start_decoding();
  if (!state) state = std::make_unique<RecomputeDecoding>(model);
  return state;
}

}  // namespace attnbench::evals
