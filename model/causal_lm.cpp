#include "model/causal_lm.h"

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

}  // namespace attnbench::model
