#include "evals/model_export.h"

#include <cmath>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "core/common/regular_file.h"
#include "core/config/attention_schema.h"
#include "core/data/gpt2_tokenizer_json.h"

namespace attnbench::evals {

std::vector<NamedTensor> native_tensors(const model::DecoderLM& model) {
  std::vector<NamedTensor> out;
  for (const auto& p : model->named_parameters(/*recurse=*/true))
    out.push_back({p.key(), p.value()});
  for (const auto& b : model->named_buffers(/*recurse=*/true)) out.push_back({b.key(), b.value()});
  return out;
}

namespace {

// attnbench module path -> Hugging Face Llama name; "" when it has none.
std::string llama_name(const std::string& name) {
  static const std::map<std::string, std::string> per_layer = {
      {"attn_norm.weight", "input_layernorm.weight"},
      {"attn.q.weight", "self_attn.q_proj.weight"},
      {"attn.k.weight", "self_attn.k_proj.weight"},
      {"attn.v.weight", "self_attn.v_proj.weight"},
      {"attn.o.weight", "self_attn.o_proj.weight"},
      {"mlp_norm.weight", "post_attention_layernorm.weight"},
      {"mlp.gate.weight", "mlp.gate_proj.weight"},
      {"mlp.up.weight", "mlp.up_proj.weight"},
      {"mlp.down.weight", "mlp.down_proj.weight"},
  };
  if (name == "embedding.weight") return "model.embed_tokens.weight";
  if (name == "final_norm.weight") return "model.norm.weight";
  if (name == "lm_head.weight") return "lm_head.weight";
  const std::string prefix = "blocks.";
  if (name.rfind(prefix, 0) != 0) return "";
  const size_t dot = name.find('.', prefix.size());
  if (dot == std::string::npos) return "";
  auto it = per_layer.find(name.substr(dot + 1));
  if (it == per_layer.end()) return "";
  return "model.layers." + name.substr(prefix.size(), dot - prefix.size()) + "." + it->second;
}

}  // namespace

nlohmann::json llama_config(const config::RunConfig& cfg) {
  const auto& m = cfg.model;
  nlohmann::json c = {
      {"architectures", {"LlamaForCausalLM"}},
      {"model_type", "llama"},
      {"hidden_size", m.d_model},
      {"intermediate_size", m.d_ffn},
      {"num_attention_heads", m.n_head},
      {"num_key_value_heads", m.kv_heads()},
      {"head_dim", m.head_dim()},
      {"num_hidden_layers", m.n_layer},
      {"rms_norm_eps", m.norm_eps},
      {"rope_theta", cfg.attention.get_float("rope_theta")},
      {"vocab_size", m.vocab_size},
      {"max_position_embeddings", m.context_length},
      {"tie_word_embeddings", m.tie_embeddings},
      {"hidden_act", "silu"},
      {"attention_bias", false},
      {"mlp_bias", false},
      {"initializer_range", m.init_std},
      {"bos_token_id", 50256},
      {"eos_token_id", 50256},
      {"torch_dtype", "float32"},
  };
  if (!m.init_from.empty()) {  // the continued model's own special tokens (Llama 3's EOS is a list)
    const nlohmann::json source = nlohmann::json::parse(
        read_regular_file(std::filesystem::path(m.init_from) / "config.json", "model.init_from config"));
    for (const char* key : {"bos_token_id", "eos_token_id"}) c[key] = source.value(key, nlohmann::json());
  }
  // A continued Llama 3.x keeps its RoPE scaling (model.init_from): written as transformers 4 does.
  const config::ParamMap& p = cfg.attention.params;
  const std::string scaling = config::param_or<std::string>(p, "rope_scaling", "none");
  if (scaling != "none") {
    nlohmann::json s = {{"rope_type", scaling},
                        {"factor", config::param<double>(p, "rope_scaling_factor")}};
    if (scaling == "llama3") {
      s["low_freq_factor"] = config::param<double>(p, "rope_low_freq_factor");
      s["high_freq_factor"] = config::param<double>(p, "rope_high_freq_factor");
      const double original = config::param<double>(p, "rope_original_max_position_embeddings");
      // An integer as the Llama 3.x configs write it (transformers checks that it is one).
      if (original == std::floor(original)) {
        s["original_max_position_embeddings"] = static_cast<int64_t>(original);
      } else {
        s["original_max_position_embeddings"] = original;
      }
    }
    c["rope_scaling"] = s;
  }
  return c;
}

std::vector<NamedTensor> llama_tensors(const model::DecoderLM& model, const config::RunConfig& cfg,
                                       std::string* why_not) {
  auto refuse = [&](const std::string& reason) {
    if (why_not) *why_not = reason;
    return std::vector<NamedTensor>{};
  };
  const auto& a = cfg.attention;
  if (!a.has("position") || a.get_string("position") != "rope" || !a.has("normalizer") ||
      a.get_string("normalizer") != "softmax") {
    return refuse("variant '" + a.variant + "' is not softmax attention with RoPE only");
  }
  const int64_t vocab = cfg.model.vocab_size;
  std::vector<NamedTensor> out;
  for (const auto& t : native_tensors(model)) {
    std::string name = llama_name(t.name);
    if (name.empty()) return refuse("tensor " + t.name + " has no Llama counterpart");
    torch::Tensor value = t.tensor;
    if (name == "model.embed_tokens.weight" || name == "lm_head.weight") {
      value = value.narrow(0, 0, vocab);  // drop the padding rows
    }
    out.push_back({name, value});
  }
  return out;
}

namespace {

// `text` into `file`, listed in the summary; throws naming the file when it cannot be written.
void write_file(const std::filesystem::path& file, const std::string& text, ExportSummary& summary) {
  std::ofstream out(file, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + file.string());
  summary.files.push_back(file);
}

// The Llama layout's tokenizer files: model.init_from's, else GPT-2's built from its files.
void write_llama_tokenizer(const config::RunConfig& cfg, const std::filesystem::path& gpt2_dir,
                           const std::filesystem::path& dir, ExportSummary& summary) {
  if (!cfg.model.init_from.empty()) {
    const std::filesystem::path from(cfg.model.init_from);
    for (const char* name : {"tokenizer.json", "tokenizer_config.json"}) {
      if (std::filesystem::exists(from / name)) {
        write_file(dir / name, read_regular_file(from / name, "model.init_from tokenizer"), summary);
      }
    }
  } else if (!gpt2_dir.empty()) {
    write_file(dir / "tokenizer.json", data::gpt2_tokenizer_json(gpt2_dir).dump() + "\n", summary);
    write_file(dir / "tokenizer_config.json", data::gpt2_tokenizer_config().dump(2) + "\n", summary);
  }
}

}  // namespace

ExportSummary export_model(const model::DecoderLM& model, const config::RunConfig& cfg, int64_t step,
                           const std::filesystem::path& out_dir,
                           const std::filesystem::path& gpt2_tokenizer_dir) {
  ExportSummary summary;
  std::filesystem::create_directories(out_dir);
  const std::string run_id = config::config_hash(cfg);

  auto write_json = [&](const std::filesystem::path& file, const nlohmann::json& j) {
    write_file(file, j.dump(2) + "\n", summary);
  };

  std::map<std::string, std::string> meta = {{"format", "attnbench"},
                                             {"run_id", run_id},
                                             {"step", std::to_string(step)},
                                             {"config", config::canonical_json(cfg)}};
  write_safetensors(out_dir / "model.safetensors", native_tensors(model), meta);
  summary.files.push_back(out_dir / "model.safetensors");
  write_json(out_dir / "config.json",
             {{"format", "attnbench"},
              {"run_id", run_id},
              {"step", step},
              {"padded_vocab_size", cfg.model.padded_vocab()},
              {"tensor_names", "attnbench module paths: embedding.weight [padded_vocab, d_model]; "
                               "blocks.N.attn_norm.weight; blocks.N.attn.{q,k,v,o}.weight "
                               "[d_model, d_model] (q/k/v outputs head-major: head h = rows "
                               "h*head_dim..(h+1)*head_dim); blocks.N.attn.core.* (the attention "
                               "variant's own parameters, docs/variants.md); "
                               "blocks.N.mlp_norm.weight; blocks.N.mlp.{gate,up}.weight "
                               "[d_ffn, d_model]; blocks.N.mlp.down.weight [d_model, d_ffn]; "
                               "final_norm.weight; lm_head.weight [padded_vocab, d_model] "
                               "(absent when tied)"},
              {"config", config::to_json(cfg)}});

  std::string why_not;
  std::vector<NamedTensor> llama = llama_tensors(model, cfg, &why_not);
  if (llama.empty()) {
    summary.llama_skipped = why_not;
    return summary;
  }
  const auto dir = out_dir / "llama";
  std::filesystem::create_directories(dir);
  write_safetensors(dir / "model.safetensors", llama, {{"format", "pt"}});
  summary.files.push_back(dir / "model.safetensors");
  write_json(dir / "config.json", llama_config(cfg));
  write_llama_tokenizer(cfg, gpt2_tokenizer_dir, dir, summary);
  summary.llama = true;
  return summary;
}

}  // namespace attnbench::evals
