// Fuzzes the Hugging Face tokenizers (core/data/hf_tokenizer.h). The first byte picks the mode:
//   below 0x80: the rest is text for one of the fixture tokenizers of tests/fixtures/tokenizers/
//     (byte % 8 picks it). Valid UTF-8 must encode to ids inside the vocabulary and decode to valid
//     UTF-8, exactly back to the text for the byte-level layouts without a normalizer; anything
//     else must be refused with UsageError (docs/tokenizer.md, "Hugging Face tokenizers").
//   0x80 and above: the rest is a Split regex (Oniguruma syntax, as tokenizer.json holds it) in a
//     byte-level tokenizer written to a scratch file: it is translated to PCRE2 and run, or refused
//     with a clean error; when it loads, decode(encode(x)) == x must hold.
// The fixtures are found next to this file (__FILE__ is absolute in the CMake build).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/data/byte_unicode.h"
#include "core/data/hf_tokenizer.h"
#include "core/data/utf8.h"
#include "tests/fuzz/fuzz_support.h"

using namespace attnbench;

namespace {

struct Layout {
  const char* name;
  bool exact;  // decode(encode(x)) == x: byte-level, no normalizer
};
constexpr Layout kLayouts[8] = {{"gpt2", true},    {"llama3", true},   {"gpt4o", true},
                                {"qwen2", false},  {"neox", false},    {"llama2", false},
                                {"mistral", false}, {"mixed", false}};

const data::HFTokenizer& fixture(size_t i) {
  static const std::vector<data::HFTokenizer> loaded = [] {
    const auto root = std::filesystem::path(__FILE__).parent_path().parent_path() / "fixtures" /
                      "tokenizers";
    std::vector<data::HFTokenizer> v;
    for (const Layout& l : kLayouts) v.push_back(data::HFTokenizer::load(root / l.name));
    return v;
  }();
  return loaded[i];
}

void check_ids(const data::HFTokenizer& t, std::string_view text, bool exact) {
  const std::vector<uint32_t> ids = t.encode(text);
  for (uint32_t id : ids)
    if (id >= t.vocab_size()) fuzz::bug("encode gave an id outside the vocabulary", nullptr);
  const std::string decoded = t.decode(ids);
  if (data::utf8_valid_prefix(decoded) != decoded.size())
    fuzz::bug("decode gave invalid UTF-8", nullptr);
  if (exact && decoded != text) fuzz::bug("decode(encode(x)) differs from x", nullptr);
}

void fuzz_text(size_t layout, std::string_view text) {
  const data::HFTokenizer& t = fixture(layout);
  if (data::utf8_valid_prefix(text) == text.size())
    return check_ids(t, text, kLayouts[layout].exact);
  try {
    t.encode(text);
  } catch (const UsageError&) {
    return;
  }
  fuzz::bug("invalid UTF-8 was encoded", nullptr);
}

// A tokenizer.json whose only merge-free vocabulary is the 256 byte-level characters.
std::string byte_level_tokenizer(std::string_view regex) {
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) {
    uint32_t cp = data::byte_to_codepoint(static_cast<uint8_t>(b));
    std::string ch = cp < 0x80 ? std::string(1, static_cast<char>(cp))
                               : std::string{static_cast<char>(0xC0 | (cp >> 6)),
                                             static_cast<char>(0x80 | (cp & 0x3F))};
    vocab[ch] = b;
  }
  nlohmann::json split = {{"type", "Split"}, {"pattern", {{"Regex", std::string(regex)}}},
                          {"behavior", "Isolated"}, {"invert", false}};
  nlohmann::json byte_level = {{"type", "ByteLevel"}, {"add_prefix_space", false},
                               {"use_regex", false}};
  nlohmann::json spec = {
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array()}}},
      {"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", {split, byte_level}}}},
      {"decoder", {{"type", "ByteLevel"}}}};
  return spec.dump();
}

void fuzz_regex(std::string_view regex) {
  if (data::utf8_valid_prefix(regex) != regex.size()) return;  // JSON text is Unicode
  fuzz::write_file(fuzz::scratch() / "tokenizer.json", byte_level_tokenizer(regex));
  fuzz::expect_clean_errors([&] {
    const data::HFTokenizer t = data::HFTokenizer::load(fuzz::scratch());
    check_ids(t, "It's 12345 caf\xc3\xa9  \t\n\n x-y_z \xe6\x97\xa5\xe6\x9c\xac!", true);
    check_ids(t, regex, true);
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] < 0x80) {
    fuzz_text(data[0] % 8, rest);
  } else {
    fuzz_regex(rest);
  }
  return 0;
}
