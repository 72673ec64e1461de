// What `eval`, `generate` and `attn-stats` (and a sweep's eval-only cells) run, from one folder
// (docs/pretrained.md): a model attnbench trained (a run folder or a checkpoint folder, with the
// GPT-2 tokenizer from the data root) or a Hugging Face model folder (recognised by its
// config.json, with its own tokenizer.json). Both give a decoder (model/causal_lm.h), a tokenizer
// (core/data/text_tokenizer.h), the evaluation defaults and an identity for the results store.
#pragma once
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/config/run_config.h"
#include "core/data/text_tokenizer.h"
#include "evals/evaluator.h"
#include "model/causal_lm.h"
#include "results/rows.h"
#include "results/store.h"

namespace attnbench::evals {

// An imported model's identity in the store: its family (model_type), its name (the folder's) and
// the SHA-256 of its weights; the run id hashes them with its config.json.
struct PretrainedIdentity {
  std::string family;
  std::string name;
  std::string weights_sha256;
  std::string config_json;  // config.json, canonical (sorted keys, no spaces)
  // The tokenizer.json it reads text with: stored with the run (not part of its id), and a later
  // scoring with another one is refused (check_stored_tokenizer).
  std::string tokenizer_sha256;
};

struct ScoredModel {
  std::shared_ptr<model::CausalLMImpl> model;
  torch::Device device{torch::kCPU};
  std::filesystem::path source;  // the folder actually read
  int64_t step = 0;              // the training step (0 for an imported model)
  std::string run_id;
  EvalOptions options;           // the model's defaults: batch size, BOS policy, prefix token
  std::optional<config::RunConfig> cfg;        // attnbench's models only
  std::optional<PretrainedIdentity> pretrained;  // imported models only

  // What the store records of the run: its canonical config JSON and its parameters (flattened:
  // config keys for attnbench's models; pretrained.family, .name, .weights_sha256 and the model's
  // shape for an imported one).
  std::string config_json() const;
  std::vector<results::Param> params() const;

  // The model's tokenizer, read on first use (attnbench's models: run_tokenizer, GPT-2's from the
  // data root read only by a command that reads text; an imported model's, and the one of a run
  // continuing it, is read with the model).
  const data::TextTokenizer& tokenizer() const;

  mutable std::shared_ptr<const data::TextTokenizer> tokenizer_;  // read by tokenizer()
  std::string data_dir;  // where gpt2_tokenizer/ is: attnbench's models' tokenizer, and the one
                         // that decodes shards for an imported model
};

// The tokenizer a run attnbench trained reads text with: model.init_from's tokenizer.json when it
// continues a pretrained model, else GPT-2's from `data_dir` (core/data/paths.h).
std::shared_ptr<const data::TextTokenizer> run_tokenizer(const config::RunConfig& cfg,
                                                         const std::string& data_dir);

// Loads the model in `dir` on the device `device` names (auto | cpu | cuda; "" = the checkpoint's
// train.device, cpu for an imported model; `device_key` names the option in errors), and its
// tokenizer (`data_dir`: where gpt2_tokenizer/ lives, for attnbench's models). Everything is
// checked before the weights are read; UsageError naming the file or key otherwise.
ScoredModel load_scored_model(const std::filesystem::path& dir, const std::string& device,
                              const std::string& device_key, const std::string& data_dir);

// Scores are of the text a tokenizer reads: an imported model whose stored run recorded another
// tokenizer.json (its params' pretrained.tokenizer_sha256) than the folder holds now is refused,
// naming both, rather than scored again over its rows. Runs stored before the record pass.
void check_stored_tokenizer(results::Store& store, const ScoredModel& m);

// UsageError unless the model can read text: every token of its tokenizer is a row of its head
// (`command` names the command in the message).
void require_text(const ScoredModel& m, const std::string& command);

}  // namespace attnbench::evals
