// The Llama-style decoder ("Transformer++", docs/model.md): token embedding over the padded
// vocabulary, n_layer pre-norm blocks
//   h = h + attn(RMSNorm(h));  h = h + SwiGLU(RMSNorm(h))
// a final RMSNorm and an LM head (untied unless model.tie_embeddings).
// Init: every projection and the embedding ~ N(0, init_std); the residual output projections (attn o,
// MLP down) ~ N(0, init_std / sqrt(2 n_layer)) (GPT-2's scaled init); norm weights 1; the attention
// variant initialises its own parameters (tau, distance bias, ...).
#pragma once
#include <torch/torch.h>

#include <vector>

#include "core/config/run_config.h"
#include "model/attention.h"
#include "model/causal_lm.h"
#include "model/rms_norm.h"
#include "model/swiglu.h"

namespace attnbench::model {

class BlockImpl : public torch::nn::Module {
 public:
  BlockImpl(const config::ModelConfig& model, const config::AttentionConfig& attention,
            int64_t layer);
  torch::Tensor forward(const torch::Tensor& h, torch::Tensor* attn_weights = nullptr);
  // h [B, T, C] of T new positions after those in `cache` (which gains them).
  torch::Tensor forward_incremental(const torch::Tensor& h, variants::KVCache& cache);

  RMSNorm attn_norm{nullptr}, mlp_norm{nullptr};
  CausalSelfAttention attn{nullptr};
  SwiGLU mlp{nullptr};
};
TORCH_MODULE(Block);

class DecoderLMImpl : public CausalLMImpl {
 public:
  // cfg.model must be resolved (preset applied: n_layer, d_model, n_head, d_ffn all > 0) and
  // cfg.attention.params resolved against the variant's schema.
  explicit DecoderLMImpl(const config::RunConfig& cfg);

  // idx [B, T] int64 -> logits [B, T, padded_vocab].
  torch::Tensor forward(const torch::Tensor& idx);
  // The same; also appends each layer's attention weights [B, H, T, T] to *attn_weights.
  torch::Tensor forward(const torch::Tensor& idx, std::vector<torch::Tensor>* attn_weights);

  // The trunk: idx [B, T] -> the final-normed hidden states [B, T, C]. With `cache`, the T tokens
  // follow the cache's P positions (incremental decoding: rows P.. of the trunk over all P + T
  // tokens) and are appended to it.
  torch::Tensor hidden(const torch::Tensor& idx, DecoderCache* cache = nullptr) override;
  // The LM head's weight [padded_vocab, C] (the embedding matrix when tied): head(h) = h weight^T.
  const torch::Tensor& head_weight() const override;
  LMShape shape() const override;  // vocab_size: model.vocab_size (the real tokens)
  torch::Tensor embed(const torch::Tensor& idx) override;
  torch::Tensor layer(int64_t l, const torch::Tensor& h, torch::Tensor* weights) override;
  // The variant's learned statistics on the attention's own input x = RMSNorm(h) (block order).
  std::vector<variants::LearnedStatistic> learned(int64_t l, const torch::Tensor& h) override;
  // The training loss: mean next-token cross-entropy of the logits of idx [B, T] against targets
  // [B, T] over the padded vocabulary (over model.vocab_size for a model continuing a pretrained
  // one, model.init_from: the pretrained model's own loss), the head and the loss computed in
  // chunks of tokens (model/lm_loss.h), never as [B T, padded_vocab] logits.
  torch::Tensor loss(const torch::Tensor& idx, const torch::Tensor& targets);

  // Distinct parameters (a tied head is counted once).
  int64_t num_parameters() const;

  const config::ModelConfig& model_config() const { return model_; }

  torch::nn::Embedding embedding{nullptr};
  torch::nn::ModuleList blocks{nullptr};
  RMSNorm final_norm{nullptr};
  torch::nn::Linear lm_head{nullptr};  // null when tied to the embedding

 private:
  config::ModelConfig model_;
  std::vector<Block> block_list_;  // typed handles to the entries of `blocks`
};
TORCH_MODULE(DecoderLM);

}  // namespace attnbench::model
