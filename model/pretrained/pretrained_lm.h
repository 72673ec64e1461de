// A decoder imported from a Hugging Face folder (docs/pretrained.md), one module for every
// registered architecture (architecture.h), nanoGPT-style: the config's switches select the norm,
// the positions, the MLP and the residual wiring.
//   h = wte[idx] (then project_in) (+ wpe[offset + positions])
//   per layer:  pre-norm sequential: h = h + attn(norm1 h);  h = h + mlp(norm2 h)
//               pre-norm parallel:   h = h + attn(norm1 h) + mlp(norm2 h)       (GPT-NeoX)
//               post-norm:           h = norm1(h + attn(h)); h = norm2(h + mlp(h))  (OPT-350m)
//   logits = head(project_out(norm_f h))       (norm_f and project_out where the model has them)
// Attention is causal softmax over q k^T / sqrt(head_dim), within each layer's sliding window where
// it has one, RoPE on the first rope.dims dimensions of q and k (the half-split pairing of Llama and
// GPT-NeoX), and n_kv_head key/value heads each serving n_head / n_kv_head query heads
// (grouped-query attention). Parameters are float32 and filled by the architecture's loader;
// nothing is initialised at random.
#pragma once
#include <torch/torch.h>

#include <map>
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
  // Parameters allocated on `device`, not yet filled. On the meta device nothing is allocated: the
  // loader then checks a folder's tensors against the shapes (hf_folder.h) before any is read.
  explicit PretrainedLMImpl(ArchitectureConfig cfg, torch::Device device = torch::kCPU);

  LMShape shape() const override;
  torch::Tensor hidden(const torch::Tensor& idx, DecoderCache* cache = nullptr) override;
  const torch::Tensor& head_weight() const override;
  torch::Tensor embed(const torch::Tensor& idx) override;
  torch::Tensor layer(int64_t l, const torch::Tensor& h, torch::Tensor* weights) override;

  const ArchitectureConfig& config() const { return cfg_; }

  torch::Tensor wte, wpe, lm_head;  // wpe only with learned positions; lm_head unless tied
  torch::Tensor project_in, project_out;  // [d_model, embed_dim], [embed_dim, d_model]; OPT-350m
  std::vector<LayerWeights> layers;
  NormWeights final_norm;  // undefined without one

 private:
  // What every layer of one forward pass over positions first..first+T-1 shares, computed once:
  // RoPE's cos and sin [T, rope.dims] (undefined without RoPE) and, per window the layers use (0 =
  // none), the mask [T, first + T] of the keys a query may not see: true in its future and, with a
  // window W, where i - j >= W.
  struct Positions {
    torch::Tensor cos, sin;
    std::map<int64_t, torch::Tensor> hidden_keys;
  };
  Positions positions(int64_t first, const torch::Tensor& h) const;  // h [B, T, C]
  torch::Tensor embed_at(const torch::Tensor& idx, int64_t first);
  torch::Tensor block(int64_t l, const torch::Tensor& h, const Positions& p,
                      variants::KVCache* cache, torch::Tensor* weights);
  torch::Tensor attention(int64_t l, const torch::Tensor& x, const Positions& p,
                          variants::KVCache* cache, torch::Tensor* weights);
  torch::Tensor mlp(const LayerWeights& w, const torch::Tensor& x) const;
  torch::Tensor norm(const NormWeights& w, const torch::Tensor& x) const;
  torch::Tensor rotate(const torch::Tensor& x, const Positions& p) const;  // [B, H, T, D]

  ArchitectureConfig cfg_;
  torch::Tensor inv_freq_;  // [rope.dims / 2] float32
};
TORCH_MODULE(PretrainedLM);

}  // namespace attnbench::model::pretrained
