#include "core/data/shard_tokenizer.h"

#include "core/common/error.h"
#include "core/common/json_input.h"

namespace attnbench::data {

namespace fs = std::filesystem;

std::optional<ShardTokenizer> ShardManifests::tokenizer_of(const fs::path& shard) {
  const fs::path folder = shard.parent_path(), file = folder / "manifest.json";
  const auto [it, fresh] = by_folder_.try_emplace(folder);
  if (fresh && fs::is_regular_file(file)) it->second = read_json_input(file, "the file");
  if (!it->second) return std::nullopt;
  const nlohmann::json& m = *it->second;
  try {
    for (const auto& listed : m.at("shards")) {
      if (listed.at("file") != shard.filename().string()) continue;
      const nlohmann::json& t = m.at("tokenizer");
      return ShardTokenizer{t.at("name").get<std::string>(),
                            t.at("files").at(0).at("sha256").get<std::string>()};
    }
    return std::nullopt;
  } catch (const nlohmann::json::exception&) {
    throw UsageError(file.string() + ": not a data prepare manifest (expected shards[].file and "
                     "tokenizer.name, tokenizer.files[0].sha256)");
  }
}

}  // namespace attnbench::data
