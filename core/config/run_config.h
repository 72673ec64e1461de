// A run's configuration: TOML sections [model] [attention] [data] [train] [eval] as typed structs
// with defaults, --set overrides, validation before any work, canonical JSON and a stable hash.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/config/value.h"

namespace toml {
inline namespace v3 {
class table;
}
}  // namespace toml

namespace attnbench::config {

struct ModelConfig {
  std::string preset = "tiny";  // tiny | small | 125m | 340m | 760m: defaults for the four below
  int64_t n_layer = 0;          // 0 in TOML = take the preset's value
  int64_t d_model = 0;
  int64_t n_head = 0;
  // Key/value heads: fewer than n_head is grouped-query attention (Ainslie et al. 2023), query head
  // h reading key/value head h / (n_head / n_kv_head); 1 is multi-query attention. 0 = n_head.
  int64_t n_kv_head = 0;
  int64_t d_ffn = 0;            // 0 = the preset's, else round_up(8 d_model / 3, 256)
  int64_t vocab_size = 50257;   // GPT-2; padded to a multiple of 64 for the embedding
  int64_t context_length = 256;
  bool tie_embeddings = false;
  double norm_eps = 1e-6;
  double init_std = 0.02;
  // A Hugging Face Llama-family folder whose weights start the run ("" = initialised at random;
  // docs/pretrained.md, "Continuing a pretrained model"). Its config.json sets the shape above, and
  // model.preset becomes "pretrained".
  std::string init_from;

  int64_t head_dim() const { return d_model / n_head; }
  int64_t kv_heads() const { return n_kv_head > 0 ? n_kv_head : n_head; }
  // The width of k and v: d_model without grouping, n_kv_head * head_dim with it.
  int64_t kv_dim() const { return n_kv_head > 0 && n_head > 0 ? n_kv_head * head_dim() : d_model; }
  int64_t padded_vocab() const { return (vocab_size + 63) / 64 * 64; }
};

struct AttentionConfig {
  std::string variant = "softmax";  // a registered variant (attnbench variants)
  std::string backend = "auto";     // auto | eager | fused
  ParamMap params;                  // every applicable parameter of the variant, resolved

  bool get_bool(const std::string& key) const;
  int64_t get_int(const std::string& key) const;
  double get_float(const std::string& key) const;  // ints are widened
  std::string get_string(const std::string& key) const;
  bool has(const std::string& key) const { return params.count(key) > 0; }
};

// The values of attention.backend (docs/kernels.md, "Dispatch"): the one list that config
// validation and the variants' dispatch check against.
const std::vector<std::string>& attention_backends();
// UsageError "attention.backend = "x" is not one of auto, eager, fused (did you mean ...)" unless
// `backend` is one of attention_backends().
void check_backend(const std::string& backend);

struct DataConfig {
  std::string train;  // llm.c shards: a file, a folder (all *train*.bin) or a glob
  std::string val;    // validation shard(s); "" = none
  // Mask@k intervention (docs/paper.md 6): put fixed_token_id at position fixed_token_position
  // (0-based) of every training window; -1 = off.
  int64_t fixed_token_position = -1;
  int64_t fixed_token_id = 50256;
};

struct TrainConfig {
  int64_t seed = 0;
  int64_t steps = 1000;
  int64_t batch_size = 8;     // sequences per micro-batch
  int64_t batch_tokens = 0;   // tokens per optimizer step; 0 = one micro-batch (no accumulation)
  double lr = 3e-4;
  double min_lr_ratio = 0.1;  // cosine decays to lr * min_lr_ratio
  // The attention variant's own parameters (tau, the distance bias, ...) train at lr times this:
  // parameters retrofitted onto a pretrained model (model.init_from) need more than its small rate.
  double attention_lr_scale = 1.0;
  int64_t warmup_steps = 100;
  double weight_decay = 0.1;  // matrices only
  double beta1 = 0.9;
  double beta2 = 0.95;
  double adam_eps = 1e-8;
  double grad_clip = 1.0;     // 0 = off
  int64_t log_interval = 10;
  int64_t eval_interval = 100;  // validation loss every N steps (and at the end); 0 = end only
  int64_t eval_tokens = 65536;  // validation tokens per evaluation
  int64_t checkpoint_interval = 100;
  int64_t threads = 0;          // 0 = $OMP_NUM_THREADS, else all cores
  std::string device = "auto";  // auto | cpu | cuda
  // "fp32" | "bf16": bf16 autocast of the matrix products (CUDA only), fp32 master weights and loss.
  std::string precision = "fp32";
  bool tf32 = false;            // TF32 cuBLAS matmuls for fp32 (torch.backends.cuda.matmul.allow_tf32)
  bool deterministic = false;   // deterministic algorithms only (torch.use_deterministic_algorithms)
  double peak_flops = 0;        // the device's peak FLOP/s for MFU; 0 = from the GPU's name
};

struct EvalConfig {
  std::vector<std::string> tasks;
  int64_t limit = 0;        // 0 = every item
  // Per-task limits that replace `limit` for the named tasks, e.g. { wikitext = 5 } (WikiText's
  // 62 documents cost as much as thousands of multiple-choice items).
  std::map<std::string, int64_t> task_limits;
  int64_t limit_for(const std::string& task) const {
    auto it = task_limits.find(task);
    return it == task_limits.end() ? limit : it->second;
  }
  int64_t batch_size = 32;
  std::string bos = "none"; // BOS policy, recorded with every result: none | prepend
  // Further lengths to score every task at, beyond the training context too (length
  // extrapolation, docs/evaluation.md); stored as task@N. The model's own context is always scored.
  std::vector<int64_t> contexts;
  // The attention statistics a sweep measures on each model after scoring it (docs/diagnostics.md,
  // "In a sweep"): at most this many tokens of held-out text, in windows of attention_window
  // tokens (0 = the model's context length).
  int64_t attention_tokens = 8192;
  int64_t attention_window = 0;
};

struct RunConfig {
  ModelConfig model;
  AttentionConfig attention;
  DataConfig data;
  TrainConfig train;
  EvalConfig eval;
  std::string source;  // file it was read from ("" when built in code)
};

// Completes a config whose model.init_from is set: the model's shape, attention.rope_theta, the
// RoPE scaling (attention.rope_scaling and its parameters) and eval.bos from the folder, and the checks that the variant starts as the pretrained model
// computes. Reading a Hugging Face folder is the model layer's job: model/init_from.cpp registers
// the one resolver. Throws UsageError saying what is wrong.
using InitFromResolver = std::function<void(RunConfig&)>;
void register_init_from_resolver(InitFromResolver resolver);

// Reads a TOML run config, applies `sets` ("a.b=value", value in TOML syntax, bare words taken as
// strings), validates everything, and resolves presets and defaults. Throws InputError naming
// file:line:col (or the --set) for unknown keys (with the nearest valid key), wrong types,
// out-of-range or inconsistent values.
// A file ending in .json is a resolved config as a run folder's config.json holds it (to_json):
// validated the same way, errors naming the file and the key. `sets` are refused for it
// (UsageError): its preset sizes and variant parameters are written out, so an override of
// model.preset or attention.variant would not mean what it says.
RunConfig load_run_config(const std::filesystem::path& file, const std::vector<std::string>& sets = {});
RunConfig parse_run_config(const std::string& toml_text, const std::string& source_name,
                           const std::vector<std::string>& sets = {});
RunConfig parse_json_run_config(const std::string& json_text, const std::string& source_name);
// The same from an already parsed table (sweeps build cells this way); nodes carry their positions.
RunConfig resolve_run_config(const toml::table& table, const std::string& source_name);

// Applies one "a.b=value" override to a table, creating sections as needed.
void apply_override(toml::table& table, const std::string& assignment);

// Canonical JSON of the resolved config: sorted keys, every default made explicit, parameters that
// do not apply dropped, so that equal semantics give equal text.
nlohmann::json to_json(const RunConfig& cfg);
std::string canonical_json(const RunConfig& cfg);
// Inverse of to_json (checkpoints and run folders store it), validated like a TOML file; errors
// name `source_name` and the key.
RunConfig from_json(const nlohmann::json& j, const std::string& source_name = "stored config");
// First 12 hex digits of XXH3-64 of canonical_json: the run id. Leaves out [eval], the
// execution-only keys (backend, threads, device, intervals, tf32, deterministic, peak_flops) and the
// keys added after run ids existed while they are at their default (train.precision = "fp32"), so
// that adding a key never changes an existing run's id (docs/training.md, "Run ids").
std::string config_hash(const RunConfig& cfg);

// Flattened "section.key" -> value of the resolved config (the results store's params table).
std::vector<std::pair<std::string, Value>> flatten(const RunConfig& cfg);
// The flattened keys the run id covers (flatten without eval.* and the execution-only keys): what
// the ranks of one data-parallel job must hold equal, named key by key.
std::vector<std::pair<std::string, Value>> identity_keys(const RunConfig& cfg);

}  // namespace attnbench::config
