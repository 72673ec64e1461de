// OPT (model_type "opt"; Zhang et al. 2022, where much of the attention-sink and massive-activation
// literature measures): learned absolute positions whose table starts at row 2 (OPT's offset),
// LayerNorm (eps 1e-5, no config key), a ReLU MLP (fc1, fc2), biases unless enable_bias is false, a
// head tied to the token embedding. Pre-LN, except where do_layer_norm_before is false (opt-350m):
// post-LN, no final norm, and a token embedding of word_embed_proj_dim projected in and out of the
// model's width (project_in, project_out, no bias). Names as OPTForCausalLM saves them,
// model.decoder.{embed_tokens, embed_positions, project_in, project_out, final_layer_norm,
// layers.N.{self_attn.{q,k,v,out}_proj, self_attn_layer_norm, fc1, fc2, final_layer_norm}}, or
// without the "model." prefix (the published files were saved from OPTModel).
#include <tuple>

#include "model/pretrained/weights.h"

// Its own namespace: the library compiles as a unity build, where the architectures' helpers meet.
namespace attnbench::model::pretrained::opt {

namespace {

ArchitectureConfig parse(const HFConfig& cfg) {
  ArchitectureConfig a;
  a.model_type = "opt";
  a.n_layer = cfg.size("num_hidden_layers");
  a.d_model = cfg.size("hidden_size");
  a.n_head = a.n_kv_head = cfg.size("num_attention_heads");
  a.head_dim = whole_heads(cfg, a.d_model, a.n_head, "num_attention_heads");
  a.d_ffn = cfg.size("ffn_dim");
  a.vocab_size = cfg.size("vocab_size");
  a.context_length = cfg.size("max_position_embeddings");
  const int64_t embed = cfg.size("word_embed_proj_dim", a.d_model);
  a.embed_dim = embed == a.d_model ? 0 : embed;
  a.norm = Norm::LayerNorm;
  a.norm_eps = 1e-5;  // torch.nn.LayerNorm's default; OPTConfig has no key for it
  if (!cfg.boolean("layer_norm_elementwise_affine", true)) {
    cfg.refuse("layer_norm_elementwise_affine",
               "only LayerNorm with a weight and bias is supported");
  }
  a.mlp = parse_activation(cfg, "activation_function", "relu");
  a.learned_positions = true;
  a.position_offset = 2;  // OPTLearnedPositionalEmbedding: position p reads row p + 2
  a.pre_norm = cfg.boolean("do_layer_norm_before", true);
  // transformers builds the final norm only for pre-LN models; _remove_final_layer_norm drops it
  // there too (checkpoints converted before it existed).
  const bool removed = cfg.boolean("_remove_final_layer_norm", false);
  a.final_norm = a.pre_norm && !removed;
  a.qkv_bias = a.o_bias = a.mlp_bias = cfg.boolean("enable_bias", true);
  a.tied = cfg.boolean("tie_word_embeddings", true);
  // dropout and layerdrop are off in evaluation; init_std only initialises.
  cfg.ignore({"dropout", "layerdrop", "init_std", "activation_dropout"});
  return a;
}

void load(PretrainedLMImpl& m, WeightSource& w) {
  const std::string root =
      w.has("model.decoder.embed_tokens.weight") ? "model.decoder." : "decoder.";
  fill(w, root + "embed_tokens.weight", m.wte);
  fill(w, root + "embed_positions.weight", m.wpe);
  fill_if(w, root + "project_in.weight", m.project_in);
  fill_if(w, root + "project_out.weight", m.project_out);
  for (size_t l = 0; l < m.layers.size(); ++l) {
    LayerWeights& L = m.layers[l];
    const std::string p = root + "layers." + std::to_string(l) + ".";
    fill_norm(w, p + "self_attn_layer_norm", L.norm1);
    fill_norm(w, p + "final_layer_norm", L.norm2);
    for (auto [name, weight, bias] : {std::tuple{"q_proj", &L.q, &L.q_bias},
                                      std::tuple{"k_proj", &L.k, &L.k_bias},
                                      std::tuple{"v_proj", &L.v, &L.v_bias},
                                      std::tuple{"out_proj", &L.o, &L.o_bias}}) {
      fill(w, p + "self_attn." + name + ".weight", *weight);
      fill_if(w, p + "self_attn." + name + ".bias", *bias);
    }
    fill(w, p + "fc1.weight", L.up);
    fill_if(w, p + "fc1.bias", L.up_bias);
    fill(w, p + "fc2.weight", L.down);
    fill_if(w, p + "fc2.bias", L.down_bias);
  }
  if (m.config().final_norm) fill_norm(w, root + "final_layer_norm", m.final_norm);
  if (!m.config().tied) fill(w, "lm_head.weight", m.lm_head);
}

// A tied head may be saved too (lm_head.weight, equal to embed_tokens).
bool ignorable(const std::string& name) { return name == "lm_head.weight"; }

const RegisterArchitecture opt("opt", parse, load, ignorable);

}  // namespace
}  // namespace attnbench::model::pretrained::opt
