// Llama (model_type "llama") and the two that differ from it only in config.json: Mistral (a
// sliding window) and Qwen2 (q/k/v biases, sliding windows in some layers). RMSNorm, SwiGLU, RoPE with
// linear or Llama 3 scaling, grouped-query attention (num_key_value_heads), tied or untied head.
// Names as LlamaForCausalLM saves them: model.embed_tokens, model.layers.N.{input_layernorm,
// self_attn.{q,k,v,o}_proj, post_attention_layernorm, mlp.{gate,up,down}_proj}, model.norm, lm_head.
#include <tuple>

#include "model/pretrained/weights.h"

// Its own namespace: the library compiles as a unity build, where the architectures' helpers meet.
namespace attnbench::model::pretrained::llama {

namespace {

// Each layer's sliding window (ArchitectureConfig::layer_windows) as transformers 5 builds it.
// Mistral: sliding_window, when set, in every layer. Qwen2: sliding_window only with
// use_sliding_window, in the layers layer_types names sliding_attention, by default those from
// max_window_layers on.
std::vector<int64_t> layer_windows(const HFConfig& cfg, const std::string& type, int64_t n_layer) {
  if (type == "llama") return {};
  const int64_t window = cfg.has("sliding_window") ? cfg.size("sliding_window") : 0;  // null: none
  cfg.ignore({"sliding_window"});
  if (type == "mistral") return std::vector<int64_t>(static_cast<size_t>(n_layer), window);
  const bool sliding = cfg.boolean("use_sliding_window", false);
  const int64_t first_sliding = cfg.integer("max_window_layers", 28);
  std::vector<int64_t> windows;
  if (const auto types = cfg.array("layer_types")) {
    if (static_cast<int64_t>(types->size()) != n_layer) {
      cfg.refuse("layer_types", "expected one entry per layer (" + std::to_string(n_layer) + ")");
    }
    for (const auto& t : *types) {
      if (t != "sliding_attention" && t != "full_attention") {
        cfg.refuse("layer_types", "expected full_attention or sliding_attention per layer");
      }
      if (t == "sliding_attention" && !(sliding && window > 0)) {
        cfg.refuse("layer_types", "names sliding_attention layers but no sliding window is set "
                                  "(use_sliding_window and sliding_window)");
      }
      windows.push_back(t == "sliding_attention" ? window : 0);
    }
    return windows;
  }
  for (int64_t l = 0; l < n_layer; ++l) {
    windows.push_back(sliding && window > 0 && l >= first_sliding ? window : 0);
  }
  return windows;
}

ArchitectureConfig parse(const HFConfig& cfg) {
  const std::string type = cfg.string("model_type", "llama");
  ArchitectureConfig a;
  a.model_type = type;
  a.n_layer = cfg.size("num_hidden_layers");
  a.d_model = cfg.size("hidden_size");
  a.n_head = cfg.size("num_attention_heads");
  a.n_kv_head = cfg.size("num_key_value_heads", a.n_head);
  a.head_dim = cfg.size("head_dim", a.d_model / a.n_head);
  a.d_ffn = cfg.size("intermediate_size");
  a.vocab_size = cfg.size("vocab_size");
  a.context_length = cfg.size("max_position_embeddings");
  a.norm = Norm::RMSNorm;
  a.norm_eps = cfg.positive("rms_norm_eps", 1e-6);
  if (cfg.string("hidden_act", "silu") != "silu") cfg.refuse("hidden_act", "expected silu (SwiGLU)");
  a.mlp = Mlp::SwiGLU;
  a.rope = parse_rope(cfg, a.head_dim);
  a.tied = cfg.boolean("tie_word_embeddings", false);
  const bool attention_bias = cfg.boolean("attention_bias", false);
  a.qkv_bias = attention_bias || type == "qwen2";  // Qwen2 always has q, k, v biases
  a.o_bias = attention_bias;
  a.mlp_bias = cfg.boolean("mlp_bias", false);
  // pretraining_tp > 1 splits the projections into slices summed afterwards: the same products.
  cfg.ignore({"pretraining_tp"});
  a.layer_windows = layer_windows(cfg, type, a.n_layer);
  return a;
}

void load(PretrainedLMImpl& m, WeightSource& w) {
  fill(w, "model.embed_tokens.weight", m.wte);
  for (size_t l = 0; l < m.layers.size(); ++l) {
    LayerWeights& L = m.layers[l];
    const std::string p = "model.layers." + std::to_string(l) + ".";
    fill_norm(w, p + "input_layernorm", L.norm1);
    fill_norm(w, p + "post_attention_layernorm", L.norm2);
    for (auto [name, weight, bias] : {std::tuple{"q", &L.q, &L.q_bias}, std::tuple{"k", &L.k, &L.k_bias},
                                      std::tuple{"v", &L.v, &L.v_bias}, std::tuple{"o", &L.o, &L.o_bias}}) {
      fill(w, p + "self_attn." + name + "_proj.weight", *weight);
      fill_if(w, p + "self_attn." + name + "_proj.bias", *bias);
    }
    for (auto [name, weight, bias] : {std::tuple{"gate", &L.gate, &L.gate_bias},
                                      std::tuple{"up", &L.up, &L.up_bias},
                                      std::tuple{"down", &L.down, &L.down_bias}}) {
      fill(w, p + "mlp." + name + "_proj.weight", *weight);
      fill_if(w, p + "mlp." + name + "_proj.bias", *bias);
    }
  }
  fill_norm(w, "model.norm", m.final_norm);
  if (!m.config().tied) fill(w, "lm_head.weight", m.lm_head);
}

// Older checkpoints save RoPE's frequencies as buffers; they are recomputed from config.json.
bool buffer(const std::string& name) { return ends_with(name, ".rotary_emb.inv_freq"); }

const RegisterArchitecture llama("llama", parse, load, buffer);
const RegisterArchitecture mistral("mistral", parse, load, buffer);
const RegisterArchitecture qwen2("qwen2", parse, load, buffer);

}  // namespace
}  // namespace attnbench::model::pretrained::llama
