// Shared by the data tests: where the data is ($ATTNBENCH_DATA; unset -> tests that need it are
// reported Skipped, set but missing files -> they fail; tests/test_skip.h) and one GPT-2 tokenizer
// loaded once.
#pragma once
#include <cstdlib>
#include <filesystem>

#include "core/data/tokenizer.h"
#include "tests/test_skip.h"

namespace attnbench::data::testing {

using attnbench::testing::data_root_or_skip;

// The GPT-2 tokenizer from $ATTNBENCH_DATA/gpt2_tokenizer (throws, failing the test, if missing).
inline const Tokenizer& gpt2(const std::filesystem::path& root) {
  static const Tokenizer t = Tokenizer::load(root / "gpt2_tokenizer");
  return t;
}

}  // namespace attnbench::data::testing
