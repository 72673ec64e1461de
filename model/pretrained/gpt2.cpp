// GPT-2 (model_type "gpt2"): LayerNorm, learned absolute positions, a GELU (tanh) MLP of 4 d_model
// unless n_inner, a head tied to the token embedding. Its projections are Conv1D layers, weights
// stored [in, out] (transposed here to torch's [out, in]), q, k and v fused in c_attn. Names as
// GPT2LMHeadModel saves them, with the "transformer." prefix or (as the original OpenAI files on
// the hub) without: wte, wpe, h.N.{ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj}, ln_f.
#include "model/pretrained/weights.h"

// Its own namespace: the library compiles as a unity build, where the architectures' helpers meet.
namespace attnbench::model::pretrained::gpt2 {

namespace {

ArchitectureConfig parse(const HFConfig& cfg) {
  ArchitectureConfig a;
  a.model_type = "gpt2";
  a.n_layer = cfg.size("n_layer");
  a.d_model = cfg.size("n_embd");
  a.n_head = a.n_kv_head = cfg.size("n_head");
  a.head_dim = whole_heads(cfg, a.d_model, a.n_head, "n_head");
  a.d_ffn = cfg.size("n_inner", 4 * a.d_model);
  a.vocab_size = cfg.size("vocab_size");
  a.context_length = cfg.size("n_positions");
  a.norm = Norm::LayerNorm;
  a.norm_eps = cfg.positive("layer_norm_epsilon", 1e-5);
  a.mlp = parse_activation(cfg, "activation_function", "gelu_new");
  a.learned_positions = true;
  a.qkv_bias = a.o_bias = a.mlp_bias = true;
  a.tied = cfg.boolean("tie_word_embeddings", true);
  if (!cfg.boolean("scale_attn_weights", true)) {
    cfg.refuse("scale_attn_weights", "only attention scaled by 1 / sqrt(head_dim) is supported");
  }
  if (cfg.boolean("scale_attn_by_inverse_layer_idx", false)) {
    cfg.refuse("scale_attn_by_inverse_layer_idx", "not supported");
  }
  // reorder_and_upcast_attn only changes where float32 is used; n_ctx is n_positions in old files;
  // resid/embd/attn_pdrop are dropouts; summary_* configure GPT2DoubleHeadsModel's extra head.
  cfg.ignore({"reorder_and_upcast_attn", "n_ctx", "resid_pdrop", "embd_pdrop", "attn_pdrop",
              "summary_type", "summary_use_proj", "summary_activation", "summary_proj_to_labels",
              "summary_first_dropout"});
  return a;
}

// A Conv1D weight [in, out] into a torch [out, in] parameter `param`.
void conv1d(WeightSource& w, const std::string& name, torch::Tensor& param) {
  param.copy_(w.take(name, {param.size(1), param.size(0)}, param).t());
}

void load(PretrainedLMImpl& m, WeightSource& w) {
  torch::NoGradGuard no_grad;
  const std::string root = w.has("transformer.wte.weight") ? "transformer." : "";
  const int64_t C = m.config().d_model;
  fill(w, root + "wte.weight", m.wte);
  fill(w, root + "wpe.weight", m.wpe);
  for (size_t l = 0; l < m.layers.size(); ++l) {
    LayerWeights& L = m.layers[l];
    const std::string p = root + "h." + std::to_string(l) + ".";
    fill_norm(w, p + "ln_1", L.norm1);
    fill_norm(w, p + "ln_2", L.norm2);
    const std::vector<torch::Tensor> qkv =
        w.take(p + "attn.c_attn.weight", {C, 3 * C}, L.q).t().chunk(3, 0);
    const std::vector<torch::Tensor> qkv_bias =
        w.take(p + "attn.c_attn.bias", {3 * C}, L.q).chunk(3, 0);
    for (int i = 0; i < 3; ++i) {
      (i == 0 ? L.q : i == 1 ? L.k : L.v).copy_(qkv[i]);
      (i == 0 ? L.q_bias : i == 1 ? L.k_bias : L.v_bias).copy_(qkv_bias[i]);
    }
    conv1d(w, p + "attn.c_proj.weight", L.o);
    fill(w, p + "attn.c_proj.bias", L.o_bias);
    conv1d(w, p + "mlp.c_fc.weight", L.up);
    fill(w, p + "mlp.c_fc.bias", L.up_bias);
    conv1d(w, p + "mlp.c_proj.weight", L.down);
    fill(w, p + "mlp.c_proj.bias", L.down_bias);
  }
  fill_norm(w, root + "ln_f", m.final_norm);
  if (!m.config().tied) fill(w, "lm_head.weight", m.lm_head);
}

// Older files save each layer's causal mask (attn.bias, attn.masked_bias); a tied head may be
// saved too (lm_head.weight, equal to wte).
bool ignorable(const std::string& name) {
  return ends_with(name, ".attn.bias") || ends_with(name, ".attn.masked_bias") ||
         name == "lm_head.weight";
}

const RegisterArchitecture gpt2("gpt2", parse, load, ignorable);

}  // namespace
}  // namespace attnbench::model::pretrained::gpt2
