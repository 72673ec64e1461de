#include "train/preflight.h"

#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/common/error.h"
#include "core/common/sha256.h"
#include "core/config/value.h"
#include "core/config/sizes.h"
#include "core/data/shard_tokenizer.h"
#include "model/device.h"

namespace attnbench::train {
namespace {

// Opens one shard (validating magic, version and size), naming the config key in any error: a
// glob or folder may hold files the user never named.
data::ShardReader open_shard(const std::string& key, const std::string& spec,
                             const std::filesystem::path& path) {
  try {
    return data::ShardReader(path);
  } catch (const UsageError& e) {
    throw UsageError(std::string(e.what()) + " (" + key + " = \"" + spec + "\")");
  }
}

// What the shards' tokens are checked against: the tokenizer the run reads text with (the SHA-256
// of model.init_from's tokenizer.json, else of GPT-2's encoder.json), and the manifests that
// record which tokenizer made them, each folder's read once for both splits.
struct TokenizerCheck {
  const config::RunConfig& cfg;
  std::string expected_sha256;
  data::ShardManifests manifests;
};

// Tokens are text only in the tokenizer that made them: a run reads its evaluation text with
// model.init_from's tokenizer.json, else GPT-2's, and shards another tokenizer made would train it
// on ids that mean other text. A tokenizer is known by its file's SHA-256, not its name. Shards
// without a manifest (llm.c's own) cannot be checked.
void check_shard_tokenizer(const std::string& key, const std::string& spec,
                           const std::filesystem::path& path, TokenizerCheck& check) {
  const std::optional<data::ShardTokenizer> recorded = check.manifests.tokenizer_of(path);
  if (!recorded || recorded->sha256 == check.expected_sha256) return;
  const config::RunConfig& cfg = check.cfg;
  const bool continuing = !cfg.model.init_from.empty();
  throw UsageError(fmt::format(
      "{}: its manifest.json records tokens of the tokenizer \"{}\" (sha256 {}), not {} ({} = "
      "\"{}\"); prepare the data {}",
      path.string(), recorded->name, recorded->sha256.substr(0, 12),
      continuing ? "model.init_from's tokenizer.json" : "GPT-2's, which this run reads text with",
      key, spec,
      continuing ? "with `attnbench data prepare --tokenizer " + cfg.model.init_from + "`"
                 : "with GPT-2's tokenizer (`attnbench data prepare` without --tokenizer), or "
                   "continue that model (model.init_from)"));
}

std::vector<data::ShardReader> open_shards(const std::string& key, const std::string& spec,
                                           TokenizerCheck& check) {
  const config::RunConfig& cfg = check.cfg;
  std::vector<data::ShardReader> shards;
  const int64_t window = cfg.model.context_length + 1;
  for (const auto& path : data::resolve_shards(spec)) {
    data::ShardReader shard = open_shard(key, spec, path);
    check_shard_tokenizer(key, spec, path, check);
    if (shard.size() < window) {
      throw UsageError(path.string() + ": " + std::to_string(shard.size()) +
                       " tokens, fewer than one window of model.context_length + 1 = " +
                       std::to_string(window) + " (" + key + " = \"" + spec + "\")");
    }
    // An id outside the vocabulary would index past the embedding (or into its padding) mid-run.
    const uint32_t max_token = shard.scan();  // also records the checksum reads fall back on
    if (max_token >= static_cast<uint64_t>(cfg.model.vocab_size)) {
      throw UsageError(path.string() + ": token id " + std::to_string(max_token) +
                       " is outside the vocabulary (model.vocab_size = " +
                       std::to_string(cfg.model.vocab_size) + ")");
    }
    shards.push_back(std::move(shard));
  }
  return shards;
}

}  // namespace

namespace {

std::string split_identity(const std::vector<data::ShardReader>& shards) {
  int64_t tokens = 0;
  for (const auto& s : shards) tokens += s.size();
  return fmt::format("{} shards, {} tokens, xxh3 {:016x}", shards.size(), tokens,
                     data::contents_checksum(shards));
}

}  // namespace

RankIdentity rank_identity(const config::RunConfig& cfg, const TrainingData& data) {
  RankIdentity id;
  for (const auto& [name, value] : config::identity_keys(cfg))
    id.emplace_back(name, config::to_string(value));
  id.emplace_back("run id", config::config_hash(cfg));
  id.emplace_back("data.train (contents)", split_identity(data.train));
  id.emplace_back("data.val (contents)", split_identity(data.val));
  return id;
}

int64_t accumulation_steps(const config::TrainConfig& train, const config::ModelConfig& model) {
  const int64_t micro = train.batch_size * model.context_length;
  return train.batch_tokens == 0 ? 1 : train.batch_tokens / micro;
}

void check_training_config(const config::RunConfig& cfg) {
  const auto& t = cfg.train;
  const auto& m = cfg.model;
  if (t.batch_size <= 0 || m.context_length <= 0 || t.steps <= 0) {
    throw UsageError("train.batch_size, model.context_length and train.steps must be positive");
  }
  // Against this run's device: on the CPU, this machine's memory (core/config/sizes.h).
  if (auto problem = config::check_memory(cfg, t.device)) throw UsageError(problem->message);
  const int64_t micro = config::saturating_mul(t.batch_size, m.context_length);
  if (t.batch_tokens < 0 || t.batch_tokens % micro != 0) {
    throw UsageError("train.batch_tokens = " + std::to_string(t.batch_tokens) +
                     " must be a multiple of train.batch_size * model.context_length = " +
                     std::to_string(t.batch_size) + " * " + std::to_string(m.context_length) +
                     " = " + std::to_string(micro) + " (gradient accumulation), or 0 for one " +
                     "micro-batch per step");
  }
  if (cfg.data.fixed_token_position >= m.context_length) {
    throw UsageError("data.fixed_token_position = " + std::to_string(cfg.data.fixed_token_position) +
                     " is outside the training window (model.context_length = " +
                     std::to_string(m.context_length) + ")");
  }
  if (cfg.data.fixed_token_position >= 0 &&
      (cfg.data.fixed_token_id < 0 || cfg.data.fixed_token_id >= m.vocab_size)) {
    throw UsageError("data.fixed_token_id = " + std::to_string(cfg.data.fixed_token_id) +
                     " is outside the vocabulary [0, " + std::to_string(m.vocab_size) + ")");
  }
  // A GPU that is not there, or bf16 on the CPU, fails here, before any shard is read.
  model::check_precision(t, model::resolve_device(t.device));
}

TrainingData preflight(const config::RunConfig& cfg) {
  check_training_config(cfg);
  if (cfg.data.train.empty()) {
    throw UsageError("data.train is not set: name llm.c token shards (a .bin file, a folder of "
                     "them or a glob), e.g. made by `attnbench data prepare`");
  }
  TokenizerCheck check{cfg, data::kGpt2EncoderSha256, {}};  // one for both splits
  if (!cfg.model.init_from.empty()) {
    check.expected_sha256 =
        sha256_file(std::filesystem::path(cfg.model.init_from) / "tokenizer.json");
  }
  TrainingData d;
  d.train = open_shards("data.train", cfg.data.train, check);
  if (!cfg.data.val.empty()) d.val = open_shards("data.val", cfg.data.val, check);
  return d;
}

}  // namespace attnbench::train
