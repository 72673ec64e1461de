#include "evals/diagnostics/text_source.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/common/error.h"
#include "core/common/regular_file.h"
#include "core/common/sha256.h"
#include "core/data/shard.h"
#include "core/data/shard_tokenizer.h"
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
  out.text = join(names);
  out.description = out.text + " (first " + std::to_string(out.tokens.size()) + " of " +
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
  out.text = gpt2_tokens.text;
  out.description = gpt2_tokens.description + " as text: the first " +
                    std::to_string(out.tokens.size()) + " of its " + std::to_string(encoded) +
                    " tokens in the model's";
  return out;
}

// The SHA-256 that names the tokenizer `model` reads text with (core/data/shard_tokenizer.h): an
// imported model's tokenizer.json, a run's model.init_from's, else GPT-2's encoder.json.
std::string tokenizer_sha256(const ScoredModel& model) {
  if (!model.cfg) return sha256_file(model.source / "tokenizer.json");
  if (!model.cfg->model.init_from.empty()) {
    return sha256_file(std::filesystem::path(model.cfg->model.init_from) / "tokenizer.json");
  }
  return data::kGpt2EncoderSha256;
}

// Which tokens `spec`'s shards hold, by their manifests: the model's own (read as they are), or
// GPT-2's (also where there is no manifest: llm.c's shards), which an imported model reads as text;
// any other tokenizer's are refused, naming the shard.
enum class ShardTokens { Own, Gpt2 };
ShardTokens shard_tokens(const std::string& spec, const ScoredModel& model) {
  const std::string own = tokenizer_sha256(model);
  data::ShardManifests manifests;
  std::optional<ShardTokens> kind;
  for (const auto& path : data::resolve_shards(spec)) {
    const std::optional<data::ShardTokenizer> t = manifests.tokenizer_of(path);
    ShardTokens k = ShardTokens::Own;
    if (!t) {  // unchecked: a run's own data, as it trained; GPT-2's for an imported model
      k = model.cfg ? ShardTokens::Own : ShardTokens::Gpt2;
    } else if (t->sha256 == own) {
      k = ShardTokens::Own;
    } else if (!model.cfg && t->sha256 == data::kGpt2EncoderSha256) {
      k = ShardTokens::Gpt2;
    } else {
      throw UsageError(path.string() + ": its manifest.json records tokens of the tokenizer \"" +
                       t->name + "\", which this model does not read text with" +
                       (model.cfg ? ""
                                  : " (an imported model reads its own tokens, or GPT-2's as text)"));
    }
    if (kind && *kind != k) {
      throw UsageError("--data " + spec + " mixes shards of the model's own tokens and of GPT-2's");
    }
    kind = k;
  }
  return kind.value_or(ShardTokens::Own);
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
    out.text = std::filesystem::path(source.text_file).filename().string();
    out.description = out.text + " (first " +
                      std::to_string(n) + " of " + std::to_string(ids.size()) + " tokens)";
    return out;
  }
  if (!model.cfg && source.shard.empty()) {
    throw UsageError("an imported model has no validation shard of its own: give --text FILE or "
                     "--data SHARD (its own tokens, or GPT-2's read as text in its tokens)");
  }
  if (!source.shard.empty()) {
    // An imported model reads GPT-2's shards as text in its own tokens.
    return shard_tokens(source.shard, model) == ShardTokens::Gpt2
               ? from_shards_as_text(source.shard, model, max_tokens)
               : from_shards(source.shard, max_tokens);
  }
  const config::RunConfig& cfg = *model.cfg;
  if (cfg.data.val.empty()) {
    throw UsageError("no --text or --data given and the checkpoint's config has no validation "
                     "shard (data.val): name the held-out text");
  }
  return from_shards(cfg.data.val, max_tokens);
}

results::AttnMeasurement measurement(const HeldOutTokens& text, int64_t window, int64_t windows) {
  results::AttnMeasurement m;
  m.window = window;
  m.tokens = window * windows;
  m.text = text.text;
  m.detail = text.description;
  return m;
}

}  // namespace attnbench::evals::diagnostics
