// Causal self-attention of one block: q, k, v, o projections (no bias; k and v to model.n_kv_head
// heads, grouped-query attention when fewer than n_head) around an attention core
// that is a registered variant (variants/registry.h). The block never knows which variant it runs
// (docs/variants.md, "The contract"): positional encoding, normaliser and their parameters live
// there.
#pragma once
#include <torch/torch.h>

#include "core/config/run_config.h"
#include "variants/variant.h"

namespace attnbench::model {

class CausalSelfAttentionImpl : public torch::nn::Module {
 public:
  // `layer`: the block's 0-based depth (a variant may depend on it, e.g. differential attention).
  CausalSelfAttentionImpl(const config::ModelConfig& model, const config::AttentionConfig& attention,
                          int64_t layer);

  // x [B, T, C] -> [B, T, C]. When `weights` is non-null the variant's post-normaliser attention
  // weights [B, H, T, T] are stored there.
  torch::Tensor forward(const torch::Tensor& x, torch::Tensor* weights = nullptr);
  // x [B, T, C] of T new positions after the P in `cache` -> [B, T, C]; appends their n_kv_head
  // key/value heads to the cache (variants::AttentionVariantImpl::forward_incremental).
  torch::Tensor forward_incremental(const torch::Tensor& x, variants::KVCache& cache);

  torch::nn::Linear q{nullptr}, k{nullptr}, v{nullptr}, o{nullptr};
  std::shared_ptr<variants::AttentionVariantImpl> core;

 private:
  // [B, T, n * D] -> [B, n, T, D]
  torch::Tensor heads(const torch::Tensor& y, int64_t n) const;
  // k(x) or v(x), [B, T, n_kv_head * D] -> [B, H, T, D]: each key/value head repeated for its group
  torch::Tensor kv_heads(const torch::Tensor& y) const;
  // [B, H, T, D] -> o([B, T, C])
  torch::Tensor merge(const torch::Tensor& y);

  int64_t n_head_, n_kv_head_, head_dim_;
};
TORCH_MODULE(CausalSelfAttention);

}  // namespace attnbench::model
