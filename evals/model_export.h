// `attnbench export`: a model's tensors for other tools (docs/evaluation.md, "Export").
//   <out>/model.safetensors   every parameter and buffer under attnbench's own module names
//                             (embedding.weight, blocks.N.attn.q.weight, ..., lm_head.weight)
//   <out>/config.json         the resolved run config, run id, step and the naming scheme
//   <out>/llama/              softmax + RoPE models only: config.json (LlamaForCausalLM),
//                             model.safetensors under Hugging Face Llama names and the tokenizer
//                             the model reads text with (tokenizer.json, tokenizer_config.json):
//                             a model folder that `eval --checkpoint`, `model.init_from` and
//                             transformers' AutoModelForCausalLM.from_pretrained read
#pragma once
#include <torch/torch.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/run_config.h"
#include "evals/export_safetensors.h"
#include "model/decoder.h"

namespace attnbench::evals {

// Every parameter and buffer of the model under its module path.
std::vector<NamedTensor> native_tensors(const model::DecoderLM& model);

// The Llama layout, or an empty list with `why_not` set when the model is not a plain softmax +
// RoPE decoder (other variants have scores LlamaForCausalLM cannot compute). Embedding and head
// keep only the real vocabulary rows (vocab_size, not the padded size), so that transformers'
// log_softmax runs over the same tokens as attnbench's evaluation. Our RoPE pairs dimension d with
// d + D/2 (variants/position.h), which is Hugging Face's rotate_half convention: q and k weights
// are copied without permutation.
std::vector<NamedTensor> llama_tensors(const model::DecoderLM& model, const config::RunConfig& cfg,
                                       std::string* why_not);
// The Llama config.json; BOS and EOS are GPT-2's end-of-text, or model.init_from's own ids.
nlohmann::json llama_config(const config::RunConfig& cfg);

struct ExportSummary {
  std::vector<std::filesystem::path> files;
  bool llama = false;
  std::string llama_skipped;  // why no Llama layout was written
};

// `gpt2_tokenizer_dir` (encoder.json, vocab.bpe) gives the Llama layout GPT-2's tokenizer files
// (core/data/gpt2_tokenizer_json.h); a run continued from a model folder (model.init_from) gets
// that folder's tokenizer.json and tokenizer_config.json instead. With neither, the layout has no
// tokenizer (tests of the tensors alone).
ExportSummary export_model(const model::DecoderLM& model, const config::RunConfig& cfg, int64_t step,
                           const std::filesystem::path& out_dir,
                           const std::filesystem::path& gpt2_tokenizer_dir);

}  // namespace attnbench::evals
