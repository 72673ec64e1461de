#include "evals/diagnostics/text_source.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/common/error.h"
#include "core/common/regular_file.h"
#include "core/data/shard.h"
#include "core/data/text_tokenizer.h"
#include "core/data/tokenizer.h"
#include "core/data/utf8.h"

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

// A shard's text in an imported model's tokens: the shard's GPT-2 tokens decoded by GPT-2's
// tokenizer (from the data root) document by document (end-of-text separates them), as lossy UTF-8
// (a document cut mid-character ends in U+FFFD), each encoded by the model's own tokenizer after
// its prefix token, as a text file is. So an imported model is measured on the text attnbench's
// models are measured on. Twice `max_tokens` GPT-2 tokens are read: the tokenizers this project
// reads spend at most that many tokens on the same English text.
HeldOutTokens from_shards_as_text(const std::string& spec, const ScoredModel& model,
                                  int64_t max_tokens) {
  const HeldOutTokens gpt2_tokens = from_shards(spec, 2 * max_tokens);
  const auto gpt2 = data::gpt2_text_tokenizer(data::gpt2_tokenizer_dir(model.data_dir));
  const data::TextTokenizer& own = model.tokenizer();
  HeldOutTokens out;
  std::vector<uint32_t> doc;
  auto flush = [&] {
    if (doc.empty()) return;
    out.tokens.push_back(own.prefix_id());
    for (uint32_t id : own.encode(data::utf8_lossy(gpt2->decode(doc)))) out.tokens.push_back(id);
    doc.clear();
  };
  for (int64_t t : gpt2_tokens.tokens) {
    if (t == static_cast<int64_t>(data::Tokenizer::kEndOfText)) {
      flush();
    } else {
      doc.push_back(static_cast<uint32_t>(t));
    }
  }
  flush();
  const size_t encoded = out.tokens.size();
  out.tokens.resize(std::min<size_t>(encoded, static_cast<size_t>(max_tokens)));
  out.description = gpt2_tokens.description + " as text: the first " +
                    std::to_string(out.tokens.size()) + " of its " + std::to_string(encoded) +
                    " tokens in the model's";
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
  if (!model.cfg) {  // shards hold GPT-2 tokens: read as text in the model's tokens
    if (source.shard.empty()) {
      throw UsageError("an imported model has no validation shard of its own: give --text FILE or "
                       "--data SHARD (read as text in the model's tokens)");
    }
    return from_shards_as_text(source.shard, model, max_tokens);
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
