// GPT-NeoX (model_type "gpt_neox": Pythia): LayerNorm, a parallel residual (use_parallel_residual:
// h + attn(ln1 h) + mlp(ln2 h)), RoPE on the first rotary_pct of each head, a GELU MLP, biases
// everywhere, an untied head (embed_out). q, k and v are fused per head in query_key_value: its
// rows are [head][q | k | v][head_dim]. Names as GPTNeoXForCausalLM saves them: gpt_neox.embed_in,
// gpt_neox.layers.N.{input_layernorm, post_attention_layernorm, attention.query_key_value,
// attention.dense, mlp.dense_h_to_4h, mlp.dense_4h_to_h}, gpt_neox.final_layer_norm, embed_out.
#include "model/pretrained/weights.h"

// Its own namespace: the library compiles as a unity build, where the architectures' helpers meet.
namespace attnbench::model::pretrained::gpt_neox {

namespace {

ArchitectureConfig parse(const HFConfig& cfg) {
  ArchitectureConfig a;
  a.model_type = "gpt_neox";
  a.n_layer = cfg.size("num_hidden_layers");
  a.d_model = cfg.size("hidden_size");
  a.n_head = a.n_kv_head = cfg.size("num_attention_heads");
  a.head_dim = whole_heads(cfg, a.d_model, a.n_head, "num_attention_heads");
  a.d_ffn = cfg.size("intermediate_size");
  a.vocab_size = cfg.size("vocab_size");
  a.context_length = cfg.size("max_position_embeddings");
  a.norm = Norm::LayerNorm;
  a.norm_eps = cfg.positive("layer_norm_eps", 1e-5);
  a.mlp = parse_activation(cfg, "hidden_act", "gelu");
  // GPTNeoXConfig's default rotary_pct is 0.25 (Pythia's). transformers 4 (4.46, for one) also saves
  // the values under the names the other RoPE models use (partial_rotary_factor, rope_theta).
  a.rope = parse_rope(cfg, a.head_dim, {"rotary_emb_base", "rope_theta"},
                      {"rotary_pct", "partial_rotary_factor"}, 0.25);
  a.parallel_residual = cfg.boolean("use_parallel_residual", true);
  a.qkv_bias = a.o_bias = cfg.boolean("attention_bias", true);
  a.mlp_bias = true;
  a.tied = cfg.boolean("tie_word_embeddings", false);
  return a;
}

void load(PretrainedLMImpl& m, WeightSource& w) {
  torch::NoGradGuard no_grad;
  const ArchitectureConfig& c = m.config();
  const int64_t C = c.d_model, H = c.n_head, D = c.head_dim;
  fill(w, "gpt_neox.embed_in.weight", m.wte);
  for (size_t l = 0; l < m.layers.size(); ++l) {
    LayerWeights& L = m.layers[l];
    const std::string p = "gpt_neox.layers." + std::to_string(l) + ".";
    fill_norm(w, p + "input_layernorm", L.norm1);
    fill_norm(w, p + "post_attention_layernorm", L.norm2);
    // [H, 3, D, C] -> q, k, v of [H D, C] each (the same for the bias, without C).
    const torch::Tensor qkv =
        w.take(p + "attention.query_key_value.weight", {3 * C, C}, L.q).view({H, 3, D, C});
    L.q.copy_(qkv.select(1, 0).reshape({H * D, C}));
    L.k.copy_(qkv.select(1, 1).reshape({H * D, C}));
    L.v.copy_(qkv.select(1, 2).reshape({H * D, C}));
    if (c.qkv_bias) {
      const torch::Tensor b =
          w.take(p + "attention.query_key_value.bias", {3 * C}, L.q).view({H, 3, D});
      L.q_bias.copy_(b.select(1, 0).reshape({H * D}));
      L.k_bias.copy_(b.select(1, 1).reshape({H * D}));
      L.v_bias.copy_(b.select(1, 2).reshape({H * D}));
    }
    fill(w, p + "attention.dense.weight", L.o);
    fill_if(w, p + "attention.dense.bias", L.o_bias);
    fill(w, p + "mlp.dense_h_to_4h.weight", L.up);
    fill(w, p + "mlp.dense_h_to_4h.bias", L.up_bias);
    fill(w, p + "mlp.dense_4h_to_h.weight", L.down);
    fill(w, p + "mlp.dense_4h_to_h.bias", L.down_bias);
  }
  fill_norm(w, "gpt_neox.final_layer_norm", m.final_norm);
  if (!c.tied) fill(w, "embed_out.weight", m.lm_head);
}

// Older files save RoPE's frequencies and the causal mask as buffers.
bool ignorable(const std::string& name) {
  return ends_with(name, ".attention.rotary_emb.inv_freq") || ends_with(name, ".attention.bias") ||
         ends_with(name, ".attention.masked_bias");
}

const RegisterArchitecture gpt_neox("gpt_neox", parse, load, ignorable);

}  // namespace
}  // namespace attnbench::model::pretrained::gpt_neox
