// The held-out tokens the diagnostics read (docs/diagnostics.md): a text file (GPT-2 tokens, one
// document: end-of-text first, as shards store documents), an llm.c shard, or by default the
// validation shard(s) named by the run's config (data.val).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/config/run_config.h"

namespace attnbench::evals::diagnostics {

struct TextSource {
  std::string text_file;  // --text
  std::string shard;      // --data: a shard, folder or glob (data::resolve_shards)
  std::string data_dir;   // --data-dir: where gpt2_tokenizer/ lives (for --text)
};

struct HeldOutTokens {
  std::vector<int64_t> tokens;
  std::string description;  // "val.bin (first 8192 of 120000 tokens)"
};

// At most `max_tokens` tokens from the source (`cfg.data.val` when neither file is given). Throws
// UsageError when both or neither (and the config has no validation data) are given, or a file is
// missing.
HeldOutTokens read_held_out(const TextSource& source, const config::RunConfig& cfg, int64_t max_tokens);

}  // namespace attnbench::evals::diagnostics
