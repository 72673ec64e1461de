// Shared by the data tests: where the data is ($ATTNBENCH_DATA; unset -> tests that need it skip
// with a message, set but missing files -> they fail) and one GPT-2 tokenizer loaded once.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include "core/data/tokenizer.h"

namespace attnbench::data::testing {

inline std::optional<std::filesystem::path> data_root_or_skip(const char* test) {
  const char* env = std::getenv("ATTNBENCH_DATA");
  if (!env || !*env) {
    std::cerr << "SKIPPED " << test << ": set ATTNBENCH_DATA to the shared data folder\n";
    return std::nullopt;
  }
  return std::filesystem::path(env);
}

// The GPT-2 tokenizer from $ATTNBENCH_DATA/gpt2_tokenizer (throws, failing the test, if missing).
inline const Tokenizer& gpt2(const std::filesystem::path& root) {
  static const Tokenizer t = Tokenizer::load(root / "gpt2_tokenizer");
  return t;
}

}  // namespace attnbench::data::testing
