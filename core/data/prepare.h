// `attnbench data prepare` (docs/data.md): text files and JSONL -> llm.c token shards with the
// GPT-2 tokenizer or a model folder's (core/data/prepare_tokenizer.h). Every document is preceded
// by PrepareTokenizer::document_start (GPT-2's end-of-text); the first
// documents (at least val_tokens tokens, whole documents) form the validation shard
// <name>_val_000000.bin, the rest is cut into train shards <name>_train_000001.bin, ... of exactly
// shard_tokens tokens (the last one shorter), as llm.c's fineweb.py does. A manifest.json records
// sources, checksums, counts and shards. Output is written into a temporary folder renamed into
// place at the end, so a failed run leaves nothing half-written.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace attnbench::data {

struct PrepareProgress {
  uint64_t bytes_done = 0, bytes_total = 0;  // input bytes as stored (compressed for .gz/.zst)
  int64_t documents = 0, tokens = 0, skipped = 0;
  double seconds = 0;
  std::string file;  // the input being read
  bool finished = false;
};

struct PrepareOptions {
  std::vector<std::filesystem::path> inputs;
  std::filesystem::path out;
  std::filesystem::path tokenizer_dir;  // GPT-2's encoder.json and vocab.bpe, or tokenizer.json
  std::string name;                     // shard name prefix; default: out's folder name
  int64_t val_tokens = 1'000'000;
  int64_t shard_tokens = 100'000'000;   // llm.c's fineweb.py shard size
  std::string text_field = "text";
  int jobs = 0;                         // <= 0: all cores
  bool skip_bad = false;                // skip malformed JSONL lines (counted) instead of stopping
  bool force = false;                   // replace an existing non-empty output folder
  std::string created_by = "attnbench data prepare";
  std::function<void(const PrepareProgress&)> progress;  // called after each batch and at the end
};

struct PreparedShard {
  std::string file, split;
  int64_t tokens = 0;
};

struct PrepareSummary {
  int64_t documents = 0, tokens = 0, skipped = 0;
  int64_t val_documents = 0, val_tokens = 0, train_documents = 0, train_tokens = 0;
  std::vector<PreparedShard> shards;
  std::vector<std::string> skipped_examples;  // the first few skipped lines' messages
  uint64_t bytes = 0;
  double seconds = 0;
};

// Validates every option and input before reading any text (UsageError), then prepares the shards.
// A malformed JSONL line throws InputError "file:line:col: ..." unless skip_bad. While it runs,
// SIGINT and SIGTERM stop it at the next document: the temporary folder is removed and the
// process ends by that signal (the previous handlers are restored when it returns).
PrepareSummary prepare_shards(const PrepareOptions& options);

}  // namespace attnbench::data
