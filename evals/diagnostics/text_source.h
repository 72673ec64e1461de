// The held-out tokens the diagnostics read (docs/diagnostics.md): a text file (the model's tokens,
// one document: the prefix token first, as shards store documents after end-of-text), an llm.c
// shard (GPT-2 tokens; for an imported model, their text in its own tokens), or by default the
// validation shard(s) named by the run's config (data.val).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "evals/scored_model.h"
#include "results/rows.h"

namespace attnbench::evals::diagnostics {

struct TextSource {
  std::string text_file;  // --text
  std::string shard;      // --data: a shard, folder or glob (data::resolve_shards)
};

struct HeldOutTokens {
  std::vector<int64_t> tokens;
  std::string text;         // the files read, by name: "val.bin", "essay.txt"
  std::string description;  // "val.bin (first 8192 of 120000 tokens)"
};

// At most `max_tokens` tokens from the source (the trained model's data.val when neither file is
// given), a text file tokenized by the model's tokenizer; for an imported model a shard's GPT-2
// tokens are decoded (GPT-2's tokenizer from model.data_dir) and encoded by its tokenizer, document
// by document. Throws UsageError when both or neither (and the model has no validation data) are
// given, or a file is missing.
HeldOutTokens read_held_out(const TextSource& source, const ScoredModel& model, int64_t max_tokens);

// How statistics measured on `text` in windows of `window` tokens, `windows` of them, were measured
// (stored beside them: results::AttnMeasurement).
results::AttnMeasurement measurement(const HeldOutTokens& text, int64_t window, int64_t windows);

}  // namespace attnbench::evals::diagnostics
