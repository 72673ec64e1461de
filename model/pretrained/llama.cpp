// Llama (model_type "llama") and the two that differ from it only in config.json: Mistral (a
// sliding window) and Qwen2 (q/k/v biases, per-layer sliding windows). RMSNorm, SwiGLU, RoPE with
// linear or Llama 3 scaling, grouped-query attention (num_key_value_heads), tied or untied head.
// Names as LlamaForCausalLM saves them: model.embed_tokens, model.layers.N.{input_layernorm,
// self_attn.{q,k,v,o}_proj, post_attention_layernorm, mlp.{gate,up,down}_proj}, model.norm, lm_head.
#include <tuple>

#include "model/pretrained/weights.h"

// Its own namespace: the library compiles as a unity build, where the architectures' helpers meet.
namespace attnbench::model::pretrained::llama {

namespace {

// A sliding window changes attention only for inputs longer than it: refused when shorter than
// the context the model is evaluated at (max_position_embeddings), accepted otherwise.
void check_window(const HFConfig& cfg, int64_t context, bool sliding) {
  if (!sliding || !cfg.has("sliding_window")) return;
  if (cfg.integer("sliding_window") < context) {
    cfg.refuse("sliding_window", "a sliding window shorter than max_position_embeddings = " +
                                     std::to_string(context) + " is not supported");
  }
}

// Qwen2: whether any layer slides (use_sliding_window; transformers >= 5 lists each layer's kind
// in layer_types, the layers from max_window_layers on sliding).
bool qwen2_slides(const HFConfig& cfg) {
  bool sliding = cfg.boolean("use_sliding_window", false);
  (void)cfg.integer("max_window_layers", 0);
  if (const auto types = cfg.array("layer_types")) {
    for (const auto& t : *types) {
      if (t == "sliding_attention") {
        sliding = true;
      } else if (t != "full_attention") {
        cfg.refuse("layer_types", "expected full_attention or sliding_attention per layer");
      }
    }
  }
  return sliding;
}

ArchitectureConfig parse(const HFConfig& cfg) {
  const std::string type = cfg.string("model_type", "llama");
  ArchitectureConfig a;
  a.model_type = type;
  a.n_layer = cfg.integer("num_hidden_layers");
  a.d_model = cfg.integer("hidden_size");
  a.n_head = cfg.integer("num_attention_heads");
  a.n_kv_head = cfg.integer("num_key_value_heads", a.n_head);
  a.head_dim = cfg.integer("head_dim", a.d_model / a.n_head);
  a.d_ffn = cfg.integer("intermediate_size");
  a.vocab_size = cfg.integer("vocab_size");
  a.context_length = cfg.integer("max_position_embeddings");
  a.norm = Norm::RMSNorm;
  a.norm_eps = cfg.number("rms_norm_eps", 1e-6);
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
  const bool sliding = type == "qwen2" ? qwen2_slides(cfg) : type == "mistral";
  check_window(cfg, a.context_length, sliding);
  if (!sliding) cfg.ignore({"sliding_window"});
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
