#include "evals/diagnostics/text_source.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/common/error.h"
#include "core/common/regular_file.h"
#include "core/data/shard.h"
#include "core/data/text_tokenizer.h"

namespace attnbench::evals::diagnostics {

namespace {

HeldOutTokens from_shards(const std::string& spec, int64_t max_tokens) {
  HeldOutTokens out;
  int64_t total = 0;
  std::vector<std::string> names;
  for (const auto& path : data::resolve_shards(spec)) {
    data::ShardReader shard(path);
    total += shard.size();
    const int64_t take = std::min<int64_t>(shard.size(), max_tokens - static_cast<int64_t>(out.tokens.size()));
    if (take <= 0) continue;
    const size_t at = out.tokens.size();
    out.tokens.resize(at + static_cast<size_t>(take));
    shard.read(0, take, out.tokens.data() + at);
    names.push_back(path.filename().string());
  }
  out.description = join(names) + " (first " + std::to_string(out.tokens.size()) + " of " +
                    std::to_string(total) + " tokens)";
  return out;
}

}  // namespace

HeldOutTokens read_held_out(const TextSource& source, const ScoredModel& model, int64_t max_tokens) {
  if (max_tokens <= 0) throw UsageError("--tokens must be > 0");
  if (!source.text_file.empty() && !source.shard.empty()) {
    throw UsageError("--text and --data name two sources: give one");
  }
  if (!source.text_file.empty()) {
    const std::string text = read_regular_file(source.text_file, "--text file");
    const data::TextTokenizer& tokenizer = model.tokenizer();
    std::vector<uint32_t> ids = tokenizer.encode(text);
    ids.insert(ids.begin(), tokenizer.prefix_id());
    HeldOutTokens out;
    const size_t n = std::min<size_t>(ids.size(), static_cast<size_t>(max_tokens));
    out.tokens.assign(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n));
    out.description = std::filesystem::path(source.text_file).filename().string() + " (first " +
                      std::to_string(n) + " of " + std::to_string(ids.size()) + " tokens)";
    return out;
  }
  if (!model.cfg) {  // shards hold GPT-2 tokens, the text of attnbench's models only
    throw UsageError("an imported model reads held-out text with its own tokenizer: give --text FILE" +
                     std::string(source.shard.empty() ? "" : " (not --data: shards hold GPT-2 tokens)"));
  }
  if (!source.shard.empty()) return from_shards(source.shard, max_tokens);
  const config::RunConfig& cfg = *model.cfg;
  if (cfg.data.val.empty()) {
    throw UsageError("no --text or --data given and the checkpoint's config has no validation "
                     "shard (data.val): name the held-out text");
  }
  return from_shards(cfg.data.val, max_tokens);
}

}  // namespace attnbench::evals::diagnostics
