// The held-out tokens the diagnostics read (docs/diagnostics.md): a text file (the model's tokens,
// one document: the prefix token first, as shards store documents after end-of-text), an llm.c
// shard (GPT-2 tokens), or by default the validation shard(s) named by the run's config (data.val).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "evals/scored_model.h"

namespace attnbench::evals::diagnostics {

struct TextSource {
  std::string text_file;  // --text
  std::string shard;      // --data: a shard, folder or glob (data::resolve_shards)
};

struct HeldOutTokens {
  std::vector<int64_t> tokens;
  std::string description;  // "val.bin (first 8192 of 120000 tokens)"
};

// At most `max_tokens` tokens from the source (the trained model's data.val when neither file is
// given), a text file tokenized by the model's tokenizer. Throws UsageError when both or neither
// (and the model has no validation data) are given, a file is missing, or a shard of GPT-2 tokens
// is given for an imported model.
HeldOutTokens read_held_out(const TextSource& source, const ScoredModel& model, int64_t max_tokens);

}  // namespace attnbench::evals::diagnostics
