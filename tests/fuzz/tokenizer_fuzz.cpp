// Fuzzes the GPT-2 tokenizer (core/data/tokenizer.h) on any bytes, as `data prepare` and
// `tokenize` meet them: encode must give ids inside the vocabulary and decode(encode(x)) == x for
// every byte string x, invalid UTF-8 included (docs/tokenizer.md, "Invalid UTF-8"). The vocabulary
// is GPT-2's own, from $ATTNBENCH_DATA/gpt2_tokenizer (scripts/fuzz skips this target without it).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/data/tokenizer.h"
#include "tests/fuzz/fuzz_support.h"

using namespace attnbench;

namespace {

const data::Tokenizer& gpt2() {
  static const data::Tokenizer t = [] {
    const char* root = std::getenv("ATTNBENCH_DATA");
    if (!root || !*root) fuzz::bug("set ATTNBENCH_DATA to the folder holding gpt2_tokenizer/", nullptr);
    return data::Tokenizer::load(std::filesystem::path(root) / "gpt2_tokenizer");
  }();
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const data::Tokenizer& tokenizer = gpt2();
  const std::vector<uint32_t> ids = tokenizer.encode(text);
  for (uint32_t id : ids) {
    if (id >= tokenizer.vocab_size()) fuzz::bug("encode gave an id outside the vocabulary", nullptr);
  }
  if (tokenizer.decode(ids) != text) fuzz::bug("decode(encode(x)) differs from x", nullptr);
  return 0;
}
