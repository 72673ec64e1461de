#include "model/pretrained/init_from.h"

#include <filesystem>
#include <string>

#include "core/common/error.h"
#include "core/config/attention_schema.h"
#include "core/data/hf_model_folder.h"
#include "core/data/hf_tokenizer.h"
#include "model/pretrained/hf_folder.h"
#include "variants/registry.h"
#include "variants/rope.h"

namespace attnbench::model {
namespace {

namespace fs = std::filesystem;
using pretrained::ArchitectureConfig;

// What attnbench's decoder block (RMSNorm, SwiGLU, RoPE over whole heads, no biases, full causal
// attention; docs/model.md) cannot compute is refused, naming the config.json key. A sliding window
// at least the run's context_length never hides a key in training, so it is accepted.
void check_representable(const ArchitectureConfig& a, const std::string& file,
                         int64_t context_length) {
  auto refuse = [&](const std::string& what) {
    throw UsageError(file + ": " + what + "; attnbench's decoder block is Llama's (RMSNorm, "
                     "SwiGLU, RoPE, no biases, full causal attention), so only such models can be "
                     "continued");
  };
  if (a.model_type != "llama" && a.model_type != "mistral" && a.model_type != "qwen2") {
    refuse("model_type = " + a.model_type);
  }
  if (a.qkv_bias || a.o_bias) refuse("attention biases (attention_bias, or Qwen2's q/k/v biases)");
  if (a.mlp_bias) refuse("mlp_bias = true");
  if (a.rope.dims != a.head_dim) refuse("RoPE on part of each head (partial_rotary_factor)");
  if (a.head_dim * a.n_head != a.d_model) {
    refuse("head_dim = " + std::to_string(a.head_dim) +
           " is not hidden_size / num_attention_heads");
  }
  for (int64_t l = 0; l < a.n_layer; ++l) {
    if (a.window(l) > 0 && a.window(l) < context_length) {
      refuse("sliding_window = " + std::to_string(a.window(l)) +
             " is shorter than model.context_length = " + std::to_string(context_length) +
             " (a shorter training window, model.context_length, avoids it)");
    }
  }
}

// attention.rope_theta and the RoPE scaling of the folder, in the variant's parameters
// (variants/position.h reads them through the same frequency function as the imported model).
void set_rope(config::ParamMap& params, const variants::RopeFrequencies& f) {
  params["rope_theta"] = f.theta;
  if (f.scaling == variants::RopeScaling::None) return;
  params["rope_scaling"] =
      std::string(f.scaling == variants::RopeScaling::Linear ? "linear" : "llama3");
  params["rope_scaling_factor"] = f.factor;
  if (f.scaling != variants::RopeScaling::Llama3) return;
  params["rope_low_freq_factor"] = f.low_freq_factor;
  params["rope_high_freq_factor"] = f.high_freq_factor;
  params["rope_original_max_position_embeddings"] = f.original_context;
}

// The run's model as the folder's config.json gives it: every [model] key but the run's own
// context_length and init_std.
void set_shape(config::ModelConfig& m, const ArchitectureConfig& a) {
  m.preset = "pretrained";
  m.n_layer = a.n_layer;
  m.d_model = a.d_model;
  m.n_head = a.n_head;
  m.n_kv_head = a.n_kv_head == a.n_head ? 0 : a.n_kv_head;  // the one spelling of "no grouping"
  m.d_ffn = a.d_ffn;
  m.vocab_size = a.vocab_size;
  m.tie_embeddings = a.tied;
  m.norm_eps = a.norm_eps;
}

// The registered resolver (core/config/run_config.h).
void resolve_init_from(config::RunConfig& cfg) {
  const fs::path dir = cfg.model.init_from;
  if (!data::is_hf_model_folder(dir)) {
    throw UsageError(dir.string() + " is not a Hugging Face model folder (expected a config.json "
                     "naming a model_type)");
  }
  const ArchitectureConfig a = pretrained::read_architecture(dir);
  config::ModelConfig& m = cfg.model;
  check_representable(a, (dir / "config.json").string(), m.context_length);
  if (m.context_length > a.context_length) {
    throw UsageError("model.context_length = " + std::to_string(m.context_length) +
                     " is longer than the model's max_position_embeddings = " +
                     std::to_string(a.context_length));
  }
  set_shape(m, a);

  const variants::VariantRegistration& variant = variants::find_variant(cfg.attention.variant);
  const std::string why_not = variant.pretrained_start
                                  ? variant.pretrained_start(cfg.attention)
                                  : "attention.variant = " + cfg.attention.variant +
                                        " has no start equal to softmax attention";
  if (!why_not.empty()) {
    throw UsageError(why_not + "; a run continuing a pretrained model must start by computing "
                     "what it computes (docs/pretrained.md lists the variants that can)");
  }
  set_rope(cfg.attention.params, a.rope.frequencies);
  try {  // the folder's values checked as a config file's would be (bounds of the variant's schema)
    cfg.attention.params = config::resolve_params(cfg.attention.variant, cfg.attention.params);
  } catch (const UsageError& e) {
    throw UsageError((dir / "config.json").string() + ": its RoPE settings are outside what the "
                     "variant takes: " + e.what());
  }
  // lm-eval's Hugging Face backend scores with the tokenizer's own BOS default; reading the
  // tokenizer here also refuses a bad one before any training.
  cfg.eval.bos = data::HFTokenizer::load(dir).adds_bos() ? "prepend" : "none";
}

const bool registered = (config::register_init_from_resolver(resolve_init_from), true);

// dst [padded, C] from src [rows, C]: the rows src has, then zeros.
void copy_rows(torch::Tensor dst, const torch::Tensor& src) {
  dst.zero_();
  dst.narrow(0, 0, src.size(0)).copy_(src);
}

}  // namespace

std::string load_init_from(DecoderLMImpl& model, const config::RunConfig& cfg) {
  (void)registered;
  const pretrained::PretrainedModel source = pretrained::load_pretrained(cfg.model.init_from);
  config::RunConfig folder = cfg;
  set_shape(folder.model, source.model->config());
  if (config::canonical_json(folder) != config::canonical_json(cfg)) {
    throw UsageError(cfg.model.init_from + "/config.json changed since the run's config was "
                     "resolved: its model is not the shape the run records");
  }
  const config::ModelConfig& m = cfg.model;
  const pretrained::PretrainedLMImpl& p = *source.model;
  torch::NoGradGuard no_grad;
  copy_rows(model.embedding->weight, p.wte);
  for (int64_t l = 0; l < m.n_layer; ++l) {
    BlockImpl& b = *model.blocks[l]->as<BlockImpl>();
    const pretrained::LayerWeights& w = p.layers[static_cast<size_t>(l)];
    b.attn_norm->weight.copy_(w.norm1.weight);
    b.attn->q->weight.copy_(w.q);
    b.attn->k->weight.copy_(w.k);
    b.attn->v->weight.copy_(w.v);
    b.attn->o->weight.copy_(w.o);
    b.mlp_norm->weight.copy_(w.norm2.weight);
    b.mlp->gate->weight.copy_(w.gate);
    b.mlp->up->weight.copy_(w.up);
    b.mlp->down->weight.copy_(w.down);
  }
  model.final_norm->weight.copy_(p.final_norm.weight);
  if (!m.tie_embeddings) copy_rows(model.lm_head->weight, p.lm_head);
  return source.weights_sha256;
}

}  // namespace attnbench::model
