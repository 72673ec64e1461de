// A decoder imported from a Hugging Face folder (docs/pretrained.md), one module for every
// registered architecture (architecture.h), nanoGPT-style: the config's switches select the norm,
// the positions, the MLP and the residual wiring.
//   h = wte[idx] (+ wpe[positions])
//   per layer:  a = attn(norm1 h)
//               sequential: h = h + a;  h = h + mlp(norm2 h)
//               parallel:   h = h + a + mlp(norm2 h)            (GPT-NeoX)
//   logits = head(norm_f h)
// Attention is causal softmax over q k^T / sqrt(head_dim), RoPE on the first rope.dims dimensions
// of q and k (the half-split pairing of Llama and GPT-NeoX), and n_kv_head key/value heads each
// serving n_head / n_kv_head query heads (grouped-query attention). Parameters are float32 and
// filled by the architecture's loader; nothing is initialised at random.
#pragma once
#include <torch/torch.h>

#include <vector>

#include "model/causal_lm.h"
#include "model/pretrained/architecture.h"

namespace attnbench::model::pretrained {

struct NormWeights {
  torch::Tensor weight, bias;  // bias undefined for RMSNorm
};

struct LayerWeights {
  NormWeights norm1, norm2;
  torch::Tensor q, k, v, o;                 // [out, in], as torch::nn::Linear
  torch::Tensor q_bias, k_bias, v_bias, o_bias;  // undefined without biases
  torch::Tensor up, gate, down;             // gate only for SwiGLU
  torch::Tensor gate_bias, up_bias, down_bias;
};

// The shape of a model of this architecture, known from config.json alone: how long an input it
// reads is checked (model::scoring_length) before its weights are read.
LMShape shape_of(const ArchitectureConfig& cfg);

class PretrainedLMImpl : public CausalLMImpl {
 public:
  explicit PretrainedLMImpl(ArchitectureConfig cfg);  // parameters allocated, not yet filled

  LMShape shape() const override;
  torch::Tensor hidden(const torch::Tensor& idx, DecoderCache* cache = nullptr) override;
  const torch::Tensor& head_weight() const override;
  torch::Tensor embed(const torch::Tensor& idx) override;
  torch::Tensor layer(int64_t l, const torch::Tensor& h, torch::Tensor* weights) override;

  const ArchitectureConfig& config() const { return cfg_; }

  torch::Tensor wte, wpe, lm_head;  // wpe only with learned positions; lm_head unless tied
  std::vector<LayerWeights> layers;
  NormWeights final_norm;

 private:
  // What every layer of one forward pass over positions first..first+T-1 shares, computed once:
  // RoPE's cos and sin [T, rope.dims] (undefined without RoPE) and the causal mask [T, first + T]
  // (true where a key lies in a query's future).
  struct Positions {
    torch::Tensor cos, sin, future;
  };
  Positions positions(int64_t first, const torch::Tensor& h) const;  // h [B, T, C]
  torch::Tensor embed_at(const torch::Tensor& idx, int64_t first);
  torch::Tensor block(const LayerWeights& w, const torch::Tensor& h, const Positions& p,
                      variants::KVCache* cache, torch::Tensor* weights);
  torch::Tensor attention(const LayerWeights& w, const torch::Tensor& x, const Positions& p,
                          variants::KVCache* cache, torch::Tensor* weights);
  torch::Tensor mlp(const LayerWeights& w, const torch::Tensor& x) const;
  torch::Tensor norm(const NormWeights& w, const torch::Tensor& x) const;
  torch::Tensor rotate(const torch::Tensor& x, const Positions& p) const;  // [B, H, T, D]

  ArchitectureConfig cfg_;
  torch::Tensor inv_freq_;  // [rope.dims / 2] float32
};
TORCH_MODULE(PretrainedLM);

// RoPE's inverse frequencies [dims / 2] in float32, with the scaling applied, computed as
// transformers computes them (its float32 operations in the same order), so that positions rotate
// by the same angles to the last bit.
torch::Tensor rope_inverse_frequencies(const Rope& rope);

}  // namespace attnbench::model::pretrained
