#include "model/causal_lm.h"

#include <fmt/format.h>

#include "core/common/error.h"

namespace attnbench::model {

DecoderCache DecoderCache::select(const torch::Tensor& rows) const {
  DecoderCache out;
  for (const auto& layer : layers) out.layers.push_back(layer.select(rows));
  return out;
}

std::vector<torch::Tensor> CausalLMImpl::attention_weights(const torch::Tensor& idx) {
  std::vector<torch::Tensor> out;
  torch::Tensor h = embed(idx);
  for (int64_t l = 0; l < shape().n_layer; ++l) {
    torch::Tensor w;
    h = layer(l, h, &w);
    out.push_back(std::move(w));
  }
  return out;
}

torch::Device CausalLMImpl::device() const {
  const auto params = parameters();
  return params.empty() ? torch::Device(torch::kCPU) : params.front().device();
}

int64_t scoring_length(const LMShape& shape, int64_t requested, const std::string& option) {
  if (requested < 0) throw UsageError(fmt::format("{} {}: expected a length >= 1", option, requested));
  if (requested == 0) return shape.context_length;
  if (shape.max_positions > 0 && requested > shape.max_positions) {
    throw UsageError(fmt::format("{} {}: this model reads at most {} tokens ({})", option, requested,
                                 shape.max_positions, shape.max_positions_reason));
  }
  return requested;
}

}  // namespace attnbench::model
