#include "model/decoder.h"

#include "model/lm_loss.h"

#include <cmath>
#include <stdexcept>
#include <unordered_set>

namespace attnbench::model {

BlockImpl::BlockImpl(const config::ModelConfig& model, const config::AttentionConfig& attention,
                     int64_t layer) {
  attn_norm = register_module("attn_norm", RMSNorm(model.d_model, model.norm_eps));
  attn = register_module("attn", CausalSelfAttention(model, attention, layer));
  mlp_norm = register_module("mlp_norm", RMSNorm(model.d_model, model.norm_eps));
  mlp = register_module("mlp", SwiGLU(model.d_model, model.d_ffn));
}

torch::Tensor BlockImpl::forward(const torch::Tensor& h, torch::Tensor* attn_weights) {
  auto x = h + attn->forward(attn_norm(h), attn_weights);
  return x + mlp(mlp_norm(x));
}

DecoderLMImpl::DecoderLMImpl(const config::RunConfig& cfg) : model_(cfg.model) {
  const auto& m = model_;
  if (m.n_layer <= 0 || m.d_model <= 0 || m.n_head <= 0 || m.d_ffn <= 0) {
    throw std::invalid_argument(
        "DecoderLM needs a resolved model config (n_layer, d_model, n_head, d_ffn > 0); got " +
        std::to_string(m.n_layer) + "/" + std::to_string(m.d_model) + "/" +
        std::to_string(m.n_head) + "/" + std::to_string(m.d_ffn));
  }
  if (m.d_model % m.n_head != 0) {
    throw std::invalid_argument("d_model " + std::to_string(m.d_model) +
                                " is not divisible by n_head " + std::to_string(m.n_head));
  }
  const int64_t vocab = m.padded_vocab();
  embedding = register_module("embedding", torch::nn::Embedding(vocab, m.d_model));
  blocks = register_module("blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < m.n_layer; ++i) {
    block_list_.emplace_back(m, cfg.attention, i);
    blocks->push_back(block_list_.back());
  }
  final_norm = register_module("final_norm", RMSNorm(m.d_model, m.norm_eps));
  // Tied: the head reuses the embedding matrix (one tensor, counted, decayed and checkpointed once).
  if (!m.tie_embeddings) {
    lm_head = register_module(
        "lm_head", torch::nn::Linear(torch::nn::LinearOptions(m.d_model, vocab).bias(false)));
  }

  torch::NoGradGuard no_grad;
  const double std_dev = m.init_std;
  const double residual_std = m.init_std / std::sqrt(2.0 * static_cast<double>(m.n_layer));
  embedding->weight.normal_(0.0, std_dev);
  if (!m.tie_embeddings) lm_head->weight.normal_(0.0, std_dev);
  for (auto& b : block_list_) {
    for (auto* lin : {&b->attn->q, &b->attn->k, &b->attn->v, &b->mlp->gate, &b->mlp->up}) {
      (*lin)->weight.normal_(0.0, std_dev);
    }
    b->attn->o->weight.normal_(0.0, residual_std);
    b->mlp->down->weight.normal_(0.0, residual_std);
  }
}

torch::Tensor BlockImpl::forward_incremental(const torch::Tensor& h, variants::KVCache& cache) {
  auto x = h + attn->forward_incremental(attn_norm(h), cache);
  return x + mlp(mlp_norm(x));
}

torch::Tensor DecoderLMImpl::forward(const torch::Tensor& idx) { return head(hidden(idx)); }

torch::Tensor DecoderLMImpl::forward(const torch::Tensor& idx,
                                     std::vector<torch::Tensor>* attn_weights) {
  if (!attn_weights) return forward(idx);
  auto h = embedding(idx);
  for (auto& b : block_list_) {
    torch::Tensor w;
    h = b->forward(h, &w);
    attn_weights->push_back(w);
  }
  return head(final_norm(h));
}

LMShape DecoderLMImpl::shape() const {
  LMShape s;
  s.n_layer = model_.n_layer;
  s.n_head = model_.n_head;
  s.context_length = model_.context_length;
  s.vocab_size = model_.vocab_size;
  return s;
}

torch::Tensor DecoderLMImpl::embed(const torch::Tensor& idx) { return embedding(idx); }

torch::Tensor DecoderLMImpl::layer(int64_t l, const torch::Tensor& h, torch::Tensor* weights) {
  return block_list_.at(static_cast<size_t>(l))->forward(h, weights);
}

std::vector<variants::LearnedStatistic> DecoderLMImpl::learned(int64_t l, const torch::Tensor& h) {
  Block& b = block_list_.at(static_cast<size_t>(l));
  return b->attn->core->learned(b->attn_norm(h));
}

torch::Tensor DecoderLMImpl::hidden(const torch::Tensor& idx, DecoderCache* cache) {
  if (cache) cache->layers.resize(block_list_.size());
  auto h = embedding(idx);
  for (size_t i = 0; i < block_list_.size(); ++i) {
    h = cache ? block_list_[i]->forward_incremental(h, cache->layers[i]) : block_list_[i]->forward(h);
  }
  return final_norm(h);
}

torch::Tensor DecoderLMImpl::loss(const torch::Tensor& idx, const torch::Tensor& targets) {
  const torch::Tensor h = hidden(idx);
  // A model continuing a pretrained one normalises over that model's vocabulary: its padded head
  // rows start at zero and would each add exp(0) to the softmax's denominator, so the run would not
  // start at the pretrained model's loss. A model of attnbench's own keeps nanoGPT's padded
  // softmax, which its runs were trained and resumed with.
  const torch::Tensor& w = head_weight();
  const torch::Tensor weight = model_.init_from.empty() ? w : w.slice(0, 0, model_.vocab_size);
  return chunked_cross_entropy(h.reshape({-1, h.size(-1)}), weight, targets.reshape({-1}));
}

const torch::Tensor& DecoderLMImpl::head_weight() const {
  return !lm_head.is_empty() ? lm_head->weight : embedding->weight;
}

int64_t DecoderLMImpl::num_parameters() const {
  std::unordered_set<const void*> seen;
  int64_t n = 0;
  for (const auto& p : parameters()) {
    if (seen.insert(p.unsafeGetTensorImpl()).second) n += p.numel();
  }
  return n;
}

}  // namespace attnbench::model
