#include "model/attention.h"

#include "variants/registry.h"

namespace attnbench::model {

CausalSelfAttentionImpl::CausalSelfAttentionImpl(const config::ModelConfig& model,
                                                 const config::AttentionConfig& attention,
                                                 int64_t layer)
    : n_head_(model.n_head), n_kv_head_(model.kv_heads()), head_dim_(model.head_dim()) {
  auto linear = [](int64_t in, int64_t out) {
    return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false));
  };
  const int64_t c = model.d_model;
  q = register_module("q", linear(c, c));
  k = register_module("k", linear(c, model.kv_dim()));
  v = register_module("v", linear(c, model.kv_dim()));
  o = register_module("o", linear(c, c));
  variants::VariantContext ctx = variants::variant_context(model, attention);
  ctx.layer = layer;
  core = register_module("core", variants::make_variant(ctx));
}

torch::Tensor CausalSelfAttentionImpl::heads(const torch::Tensor& y, int64_t n) const {
  return y.view({y.size(0), y.size(1), n, head_dim_}).transpose(1, 2);
}

torch::Tensor CausalSelfAttentionImpl::kv_heads(const torch::Tensor& y) const {
  // Each key/value head serves n_head / n_kv_head consecutive query heads, as in Llama's repeat_kv:
  // the variant then sees n_head heads of keys and values, whatever the grouping.
  return variants::repeat_kv(heads(y, n_kv_head_), n_head_ / n_kv_head_);
}

torch::Tensor CausalSelfAttentionImpl::merge(const torch::Tensor& y) {
  return o(y.transpose(1, 2).reshape({y.size(0), y.size(2), n_head_ * head_dim_}));
}

torch::Tensor CausalSelfAttentionImpl::forward(const torch::Tensor& x, torch::Tensor* weights) {
  return merge(core->forward(heads(q(x), n_head_), kv_heads(k(x)), kv_heads(v(x)), x, weights));
}

torch::Tensor CausalSelfAttentionImpl::forward_incremental(const torch::Tensor& x,
                                                           variants::KVCache& cache) {
  // The cache holds the n_kv_head heads; they are repeated for the variant at each step.
  return merge(core->forward_incremental(heads(q(x), n_head_), heads(k(x), n_kv_head_),
                                          heads(v(x), n_kv_head_), x, cache, n_head_ / n_kv_head_));
}

}  // namespace attnbench::model
