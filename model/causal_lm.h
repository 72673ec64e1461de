// What evaluation, generation and the attention diagnostics need of a decoder language model,
// whether attnbench trained it (model/decoder.h) or it was imported from a Hugging Face folder
// (model/pretrained/): the trunk with an optional cache for incremental decoding, the LM head, and
// the layers one at a time with their attention weights. One interface, so that both kinds of model
// are scored and measured by the same code.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "variants/variant.h"

namespace attnbench::model {

// What incremental decoding keeps of the tokens fed so far: one KVCache per layer (each model
// decides what its layers keep in it).
struct DecoderCache {
  std::vector<variants::KVCache> layers;
  int64_t length() const { return layers.empty() ? 0 : layers.front().length(); }
  // A cache whose row i is this cache's row rows[i] ([N] int64).
  DecoderCache select(const torch::Tensor& rows) const;
};

struct LMShape {
  int64_t n_layer = 0;
  int64_t n_head = 0;          // query heads: attention weights are [B, n_head, T, T]
  int64_t context_length = 0;  // the longest input (lm-eval's max_length)
  int64_t vocab_size = 0;      // real tokens; the head may have more rows (padding)
  // The longest input the model's positions allow: 0 = any length (RoPE, ALiBi, the distance bias
  // beyond its window and no positions are computed per position: every model attnbench trains),
  // else that limit and why (an imported model, trained up to max_position_embeddings).
  int64_t max_positions = 0;
  std::string max_positions_reason;
};

// The input length to score or measure a model at (lm-eval's max_length): `requested` when > 0,
// beyond the training context too (length extrapolation, docs/evaluation.md), else the model's
// context_length. UsageError naming `option` when the model's positions do not reach that far.
int64_t scoring_length(const LMShape& shape, int64_t requested, const std::string& option);

class CausalLMImpl : public torch::nn::Module {
 public:
  virtual LMShape shape() const = 0;

  // The trunk: idx [B, T] -> the final-normed hidden states [B, T, C]. With `cache`, the T tokens
  // follow the cache's P positions and are appended to it.
  virtual torch::Tensor hidden(const torch::Tensor& idx, DecoderCache* cache = nullptr) = 0;
  // The LM head's weight [V', C] (V' >= vocab_size): logits = hidden weight^T.
  virtual const torch::Tensor& head_weight() const = 0;
  // hidden states [..., C] -> logits [..., V'].
  torch::Tensor head(const torch::Tensor& h) { return torch::nn::functional::linear(h, head_weight()); }

  // The layers one at a time, for the diagnostics: the residual stream before layer 0 of tokens
  // at positions 0..T-1 ...
  virtual torch::Tensor embed(const torch::Tensor& idx) = 0;
  // ... and layer l on it: returns the residual stream after the layer and stores the layer's
  // attention weights [B, n_head, T, T] (every query head) in *weights.
  virtual torch::Tensor layer(int64_t l, const torch::Tensor& h, torch::Tensor* weights) = 0;
  // The attention's learned statistics in layer l on its input residual stream h (variants'
  // learned(): tau per head, ...); none for a model without learned attention parameters.
  virtual std::vector<variants::LearnedStatistic> learned(int64_t l, const torch::Tensor& h) {
    (void)l;
    (void)h;
    return {};
  }

  // Every layer's attention weights on idx [B, T] (embed, then each layer).
  std::vector<torch::Tensor> attention_weights(const torch::Tensor& idx);
  // Where the model's parameters are.
  torch::Device device() const;
};

}  // namespace attnbench::model
