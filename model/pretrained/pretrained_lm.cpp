#include "model/pretrained/pretrained_lm.h"

#include <cmath>
#include <stdexcept>

namespace attnbench::model::pretrained {

namespace F = torch::nn::functional;

PretrainedLMImpl::PretrainedLMImpl(ArchitectureConfig cfg, torch::Device device)
    : cfg_(std::move(cfg)) {
  const int64_t C = cfg_.d_model, D = cfg_.head_dim, Hq = cfg_.n_head, Hkv = cfg_.n_kv_head;
  const auto options = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  auto param = [this, options](const std::string& name, std::vector<int64_t> shape) {
    return register_parameter(name, torch::empty(shape, options), /*requires_grad=*/false);
  };
  auto norm_params = [&](const std::string& name) {
    NormWeights n;
    n.weight = param(name + "_weight", {C});
    if (cfg_.norm == Norm::LayerNorm) n.bias = param(name + "_bias", {C});
    return n;
  };
  const int64_t E = cfg_.embed_width();
  wte = param("wte", {cfg_.vocab_size, E});
  if (E != C) {
    project_in = param("project_in", {C, E});
    project_out = param("project_out", {E, C});
  }
  if (cfg_.learned_positions) wpe = param("wpe", {cfg_.position_offset + cfg_.context_length, C});
  if (!cfg_.tied) lm_head = param("lm_head", {cfg_.vocab_size, E});
  for (int64_t l = 0; l < cfg_.n_layer; ++l) {
    const std::string p = "layer" + std::to_string(l) + "_";
    LayerWeights w;
    w.norm1 = norm_params(p + "norm1");
    w.norm2 = norm_params(p + "norm2");
    w.q = param(p + "q", {Hq * D, C});
    w.k = param(p + "k", {Hkv * D, C});
    w.v = param(p + "v", {Hkv * D, C});
    w.o = param(p + "o", {C, Hq * D});
    if (cfg_.qkv_bias) {
      w.q_bias = param(p + "q_bias", {Hq * D});
      w.k_bias = param(p + "k_bias", {Hkv * D});
      w.v_bias = param(p + "v_bias", {Hkv * D});
    }
    if (cfg_.o_bias) w.o_bias = param(p + "o_bias", {C});
    w.up = param(p + "up", {cfg_.d_ffn, C});
    if (cfg_.mlp == Mlp::SwiGLU) w.gate = param(p + "gate", {cfg_.d_ffn, C});
    w.down = param(p + "down", {C, cfg_.d_ffn});
    if (cfg_.mlp_bias) {
      if (cfg_.mlp == Mlp::SwiGLU) w.gate_bias = param(p + "gate_bias", {cfg_.d_ffn});
      w.up_bias = param(p + "up_bias", {cfg_.d_ffn});
      w.down_bias = param(p + "down_bias", {C});
    }
    layers.push_back(std::move(w));
  }
  if (cfg_.final_norm) final_norm = norm_params("final_norm");
  if (cfg_.rope.dims > 0) {
    // In float32, as transformers computes them: the same angles to the last bit.
    inv_freq_ = register_buffer(
        "inv_freq",
        variants::rope_inverse_frequencies(cfg_.rope.frequencies, cfg_.rope.dims, torch::kFloat32));
  }
}

LMShape shape_of(const ArchitectureConfig& cfg) {
  LMShape s;
  s.n_layer = cfg.n_layer;
  s.n_head = cfg.n_head;
  s.context_length = cfg.context_length;
  s.vocab_size = cfg.vocab_size;
  // Learned positions have no row past it, and RoPE models were trained (and their sliding window
  // and rope_scaling checked) up to it: an imported model is scored within it.
  s.max_positions = cfg.context_length;
  s.max_positions_reason = cfg.learned_positions
                               ? "its learned absolute positions end there"
                               : "an imported model is scored within its max_position_embeddings";
  return s;
}

LMShape PretrainedLMImpl::shape() const { return shape_of(cfg_); }

const torch::Tensor& PretrainedLMImpl::head_weight() const { return cfg_.tied ? wte : lm_head; }

torch::Tensor PretrainedLMImpl::embed_at(const torch::Tensor& idx, int64_t first) {
  torch::Tensor h = F::embedding(idx, wte);
  if (project_in.defined()) h = F::linear(h, project_in);
  if (cfg_.learned_positions) {
    const int64_t T = idx.size(1);
    if (first + T > cfg_.context_length) {
      throw std::invalid_argument("positions beyond the model's " +
                                  std::to_string(cfg_.context_length) + " learned positions");
    }
    h = h + wpe.narrow(0, cfg_.position_offset + first, T);
  }
  return h;
}

torch::Tensor PretrainedLMImpl::embed(const torch::Tensor& idx) { return embed_at(idx, 0); }

torch::Tensor PretrainedLMImpl::hidden(const torch::Tensor& idx, DecoderCache* cache) {
  if (cache) cache->layers.resize(layers.size());
  const int64_t first = cache ? cache->length() : 0;
  torch::Tensor h = embed_at(idx, first);
  const Positions p = positions(first, h);
  for (size_t l = 0; l < layers.size(); ++l) {
    h = block(static_cast<int64_t>(l), h, p, cache ? &cache->layers[l] : nullptr, nullptr);
  }
  if (cfg_.final_norm) h = norm(final_norm, h);
  return project_out.defined() ? F::linear(h, project_out) : h;
}

torch::Tensor PretrainedLMImpl::layer(int64_t l, const torch::Tensor& h, torch::Tensor* weights) {
  if (l < 0 || l >= static_cast<int64_t>(layers.size())) throw std::out_of_range("layer index");
  return block(l, h, positions(0, h), nullptr, weights);
}

PretrainedLMImpl::Positions PretrainedLMImpl::positions(int64_t first,
                                                        const torch::Tensor& h) const {
  const int64_t T = h.size(1);
  Positions p;
  // Query i (position first + i) sees keys j <= first + i, and within a window W those with
  // first + i - j < W (transformers' sliding_window_overlay: kv_idx > q_idx - W).
  const auto ints = torch::TensorOptions().dtype(torch::kInt64).device(h.device());
  const torch::Tensor distance = torch::arange(first, first + T, ints).unsqueeze(1) -
                                 torch::arange(0, first + T, ints).unsqueeze(0);  // i - j
  for (int64_t l = 0; l < cfg_.n_layer; ++l) {
    const int64_t window = cfg_.window(l);
    if (p.hidden_keys.count(window)) continue;
    torch::Tensor hidden = distance < 0;
    if (window > 0) hidden = hidden.logical_or(distance >= window);
    p.hidden_keys.emplace(window, hidden);
  }
  if (cfg_.rope.dims == 0) return p;
  // cos/sin of positions x inverse frequencies, duplicated over the two halves (rotate_half).
  const torch::Tensor at = torch::arange(
      first, first + T, torch::TensorOptions().dtype(torch::kFloat32).device(h.device()));
  const torch::Tensor freqs = at.unsqueeze(1) * inv_freq_.to(h.device()).unsqueeze(0);
  const torch::Tensor angles = torch::cat({freqs, freqs}, -1);
  p.cos = angles.cos().to(h.scalar_type());
  p.sin = angles.sin().to(h.scalar_type());
  return p;
}

torch::Tensor PretrainedLMImpl::block(int64_t l, const torch::Tensor& h, const Positions& p,
                                      variants::KVCache* cache, torch::Tensor* weights) {
  const LayerWeights& w = layers[static_cast<size_t>(l)];
  if (!cfg_.pre_norm) {  // OPT with do_layer_norm_before = false
    const torch::Tensor x = norm(w.norm1, h + attention(l, h, p, cache, weights));
    return norm(w.norm2, x + mlp(w, x));
  }
  const torch::Tensor a = attention(l, norm(w.norm1, h), p, cache, weights);
  if (cfg_.parallel_residual) return h + a + mlp(w, norm(w.norm2, h));
  const torch::Tensor x = h + a;
  return x + mlp(w, norm(w.norm2, x));
}

torch::Tensor PretrainedLMImpl::norm(const NormWeights& w, const torch::Tensor& x) const {
  if (cfg_.norm == Norm::LayerNorm) {
    return F::layer_norm(x, F::LayerNormFuncOptions({cfg_.d_model}).weight(w.weight).bias(w.bias)
                                .eps(cfg_.norm_eps));
  }
  // Llama's RMSNorm: x / sqrt(mean(x^2) + eps) in float32, then the weight.
  const torch::Tensor x32 = x.to(torch::kFloat32);
  const torch::Tensor variance = x32.pow(2).mean(-1, /*keepdim=*/true);
  return w.weight * (x32 * torch::rsqrt(variance + cfg_.norm_eps)).to(x.scalar_type());
}

torch::Tensor PretrainedLMImpl::mlp(const LayerWeights& w, const torch::Tensor& x) const {
  switch (cfg_.mlp) {
    case Mlp::SwiGLU:
      return F::linear(
          torch::silu(F::linear(x, w.gate, w.gate_bias)) * F::linear(x, w.up, w.up_bias), w.down,
          w.down_bias);
    case Mlp::GeluExact:
      return F::linear(torch::gelu(F::linear(x, w.up, w.up_bias)), w.down, w.down_bias);
    case Mlp::GeluTanh:
      return F::linear(torch::gelu(F::linear(x, w.up, w.up_bias), "tanh"), w.down, w.down_bias);
    case Mlp::Relu:
      return F::linear(torch::relu(F::linear(x, w.up, w.up_bias)), w.down, w.down_bias);
  }
  throw std::logic_error("PretrainedLM: unhandled MLP");
}

torch::Tensor PretrainedLMImpl::rotate(const torch::Tensor& x, const Positions& p) const {
  if (cfg_.rope.dims == 0) return x;
  const int64_t R = cfg_.rope.dims;
  const torch::Tensor rot = x.narrow(-1, 0, R);
  const torch::Tensor half =
      torch::cat({-rot.narrow(-1, R / 2, R / 2), rot.narrow(-1, 0, R / 2)}, -1);
  const torch::Tensor rotated = rot * p.cos + half * p.sin;
  return R == x.size(-1) ? rotated : torch::cat({rotated, x.narrow(-1, R, x.size(-1) - R)}, -1);
}

torch::Tensor PretrainedLMImpl::attention(int64_t l, const torch::Tensor& x, const Positions& p,
                                          variants::KVCache* cache, torch::Tensor* weights) {
  const LayerWeights& w = layers[static_cast<size_t>(l)];
  const int64_t B = x.size(0), T = x.size(1), D = cfg_.head_dim;
  const int64_t Hq = cfg_.n_head, Hkv = cfg_.n_kv_head;
  auto heads = [&](const torch::Tensor& t, int64_t H) {
    return t.view({B, T, H, D}).transpose(1, 2);
  };
  const torch::Tensor q = rotate(heads(F::linear(x, w.q, w.q_bias), Hq), p);
  torch::Tensor k = rotate(heads(F::linear(x, w.k, w.k_bias), Hkv), p);
  torch::Tensor v = heads(F::linear(x, w.v, w.v_bias), Hkv);
  if (cache) {  // the cache keeps k after RoPE (its positions never change) and v
    if (cache->k.defined()) {
      k = torch::cat({cache->k, k}, 2);
      v = torch::cat({cache->v, v}, 2);
    }
    cache->k = k;
    cache->v = v;
  }
  k = variants::repeat_kv(k, Hq / Hkv);  // grouped-query attention
  v = variants::repeat_kv(v, Hq / Hkv);
  torch::Tensor scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(D));
  scores =
      scores.masked_fill(p.hidden_keys.at(cfg_.window(l)), -std::numeric_limits<float>::infinity());
  const torch::Tensor probs = torch::softmax(scores, -1, torch::kFloat32).to(q.scalar_type());
  if (weights) *weights = probs;
  const torch::Tensor out = torch::matmul(probs, v).transpose(1, 2).reshape({B, T, Hq * D});
  return F::linear(out, w.o, w.o_bias);
}

}  // namespace attnbench::model::pretrained
