// Which tokenizer a shard's tokens are ids of (docs/data.md, "manifest.json"). Tokens are text
// only in the tokenizer that made them, so every reader of shards checks it: training (the run's
// own tokenizer) and `attn-stats --data` (the measured model's). `data prepare` writes a
// manifest.json beside its shards naming the tokenizer and the SHA-256 of its files; llm.c's own
// shards have none and cannot be checked.
#pragma once
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace attnbench::data {

struct ShardTokenizer {
  std::string name;    // "gpt2", or the model folder's name
  std::string sha256;  // of its first file: a folder's tokenizer.json, or GPT-2's encoder.json
};

// SHA-256 of GPT-2's encoder.json as OpenAI publishes it: the file `data prepare` encodes with and
// attnbench's models read text with. A tokenizer is known by its files' content, not its name (a
// folder called "gpt2" may hold anything).
inline constexpr const char* kGpt2EncoderSha256 =
    "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783";

// The manifests of the folders shards come from, each read once.
class ShardManifests {
 public:
  // The tokenizer the manifest.json beside `shard` records, where it lists the shard; nullopt where
  // the folder has none or its manifest does not list the shard. UsageError naming the manifest
  // when it is not one `data prepare` wrote (JSON bounded as core/common/json_input.h bounds it).
  std::optional<ShardTokenizer> tokenizer_of(const std::filesystem::path& shard);

 private:
  std::map<std::filesystem::path, std::optional<nlohmann::json>> by_folder_;
};

}  // namespace attnbench::data
