// GPT-2 tokenizer: loading, round trips (valid and invalid UTF-8), end-of-text handling, batch
// encoding. Bit-identity with tiktoken on real corpora is tiktoken_golden_test.cpp.
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "core/data/tokenizer.h"
#include "core/data/utf8.h"
#include "tests/core/data/test_support.h"

using attnbench::data::Tokenizer;
using attnbench::data::testing::data_root_or_skip;
using attnbench::data::testing::gpt2;
using Ids = std::vector<uint32_t>;

namespace {
std::string stress_text() {
  std::ifstream f(std::string(ATTNBENCH_SOURCE_DIR) + "/tests/core/data/stress.txt", std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}
}  // namespace

CATCH_TEST_CASE("tokenizer loads GPT-2's vocabulary", "[tokenizer]") {
  auto root = data_root_or_skip("tokenizer load");
  if (!root) return;
  const Tokenizer& t = gpt2(*root);
  CATCH_CHECK(t.vocab_size() == 50257);
  CATCH_CHECK(t.token_bytes(Tokenizer::kEndOfText) == "<|endoftext|>");
  CATCH_CHECK(t.token_bytes(220) == " ");   // U+0120 'Ġ' spells the space byte
  CATCH_CHECK(t.token_bytes(198) == "\n");  // U+010A 'Ċ'
  CATCH_REQUIRE_THROWS_AS(t.decode({50257}), attnbench::UsageError);
}

CATCH_TEST_CASE("tokenizer encodes well-known GPT-2 examples", "[tokenizer]") {
  auto root = data_root_or_skip("tokenizer examples");
  if (!root) return;
  const Tokenizer& t = gpt2(*root);
  // Published GPT-2 ids (e.g. the HF GPT2Tokenizer docs: "Hello world" -> [15496, 995]).
  CATCH_CHECK(t.encode("Hello world") == Ids{15496, 995});
  CATCH_CHECK(t.encode(" Hello world") == Ids{18435, 995});
  CATCH_CHECK(t.encode("").empty());
  // encode is encode_ordinary: the special string is text, never the special token.
  Ids ordinary = t.encode("<|endoftext|>");
  CATCH_CHECK(ordinary.size() > 1);
  CATCH_CHECK(std::find(ordinary.begin(), ordinary.end(), Tokenizer::kEndOfText) ==
              ordinary.end());
  CATCH_CHECK(t.decode(ordinary) == "<|endoftext|>");
  Ids doc = t.encode_document("Hello world");
  CATCH_CHECK(doc == Ids{Tokenizer::kEndOfText, 15496, 995});
}

CATCH_TEST_CASE("tokenizer round-trips the stress file line by line", "[tokenizer]") {
  auto root = data_root_or_skip("tokenizer stress round trip");
  if (!root) return;
  const Tokenizer& t = gpt2(*root);
  std::string text = stress_text();
  CATCH_REQUIRE(text.size() > 5000);
  CATCH_CHECK(t.decode(t.encode(text)) == text);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) CATCH_CHECK(t.decode(t.encode(line)) == line);
}

CATCH_TEST_CASE("tokenizer round-trips invalid UTF-8 byte for byte", "[tokenizer]") {
  auto root = data_root_or_skip("tokenizer invalid utf-8");
  if (!root) return;
  const Tokenizer& t = gpt2(*root);
  const std::vector<std::string> cases = {
      "\xff", "\xc0\xaf", "abc\x80\x80 def", "\xed\xa0\x80 surrogate", "\xf4\x90\x80\x80 too high",
      "caf\xc3", "caf\xc3\xa9\xe2\x82", "\xe2\x82\xac ok \xf0\x9f\x98", std::string("a\0b", 3),
      "trailing \xc3\xa9\xff\xfe  ", "\xf0\x9f\x98\x80\x80\x80 emoji then strays"};
  for (const auto& s : cases) {
    CATCH_INFO("case of " << s.size() << " bytes");
    CATCH_CHECK(t.decode(t.encode(s)) == s);
  }
  // Rule (docs/tokenizer.md): valid segments encode exactly as they would alone.
  std::string left = "It's caf\xc3\xa9 ", right = " 123  done";
  Ids expect = t.encode(left);
  Ids mid = t.encode("\xff\xfe");
  Ids r = t.encode(right);
  expect.insert(expect.end(), mid.begin(), mid.end());
  expect.insert(expect.end(), r.begin(), r.end());
  CATCH_CHECK(t.encode(left + "\xff\xfe" + right) == expect);
  CATCH_CHECK(t.decode(mid) == "\xff\xfe");

  std::mt19937 rng(1234);
  for (int k = 0; k < 300; ++k) {
    std::string s(rng() % 64, '\0');
    for (auto& c : s) c = static_cast<char>(rng() % 256);
    CATCH_REQUIRE(t.decode(t.encode(s)) == s);
  }
}

CATCH_TEST_CASE("tokenizer survives very long runs of whitespace and digits", "[tokenizer]") {
  auto root = data_root_or_skip("tokenizer long runs");
  if (!root) return;
  const Tokenizer& t = gpt2(*root);
  for (const std::string& s :
       {std::string(200000, ' ') + "x", std::string(100000, '\n'), std::string(20000, '7'),
        "a" + std::string(50000, '\t') + "b"}) {
    Ids ids = t.encode(s);
    CATCH_CHECK(t.decode(ids) == s);
    CATCH_CHECK(ids.size() <= s.size());
  }
}

CATCH_TEST_CASE("encode_batch equals encode per document, for any thread count", "[tokenizer]") {
  auto root = data_root_or_skip("tokenizer batch");
  if (!root) return;
  const Tokenizer& t = gpt2(*root);
  std::vector<std::string> docs;
  std::istringstream lines(stress_text());
  for (std::string line; std::getline(lines, line);) docs.push_back(line);
  docs.push_back("");
  for (int threads : {1, 2, 7, 0}) {
    auto batch = t.encode_batch(docs, threads);
    CATCH_REQUIRE(batch.size() == docs.size());
    for (size_t i = 0; i < docs.size(); ++i) CATCH_CHECK(batch[i] == t.encode(docs[i]));
  }
}

CATCH_TEST_CASE("tokenizer rejects mismatched or malformed tokenizer files", "[tokenizer]") {
  auto root = data_root_or_skip("tokenizer bad files");
  if (!root) return;
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("ab_tok_bad_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(*root / "gpt2_tokenizer/encoder.json", dir / "encoder.json",
                fs::copy_options::overwrite_existing);
  {
    std::ofstream v(dir / "vocab.bpe");
    v << "#version: 0.2\nĠ t\nĠtoo many fields\n";
  }
  CATCH_REQUIRE_THROWS_WITH(Tokenizer::load(dir),
                            Catch::Matchers::Contains("vocab.bpe:3") &&
                                Catch::Matchers::Contains("malformed merge line"));
  {
    std::ofstream v(dir / "vocab.bpe");
    v << "#version: 0.2\nĠ t\n";
  }
  CATCH_REQUIRE_THROWS_WITH(Tokenizer::load(dir), Catch::Matchers::Contains("encoder.json"));
  CATCH_REQUIRE_THROWS_WITH(Tokenizer::load(dir / "nowhere"),
                            Catch::Matchers::Contains("nowhere/vocab.bpe"));
  fs::remove_all(dir);
}

CATCH_TEST_CASE("utf8 scanning follows Unicode's well-formedness table", "[tokenizer]") {
  using attnbench::data::utf8_sequence_length;
  CATCH_CHECK(utf8_sequence_length("a") == 1);
  CATCH_CHECK(utf8_sequence_length("\xc3\xa9") == 2);
  CATCH_CHECK(utf8_sequence_length("\xc1\xbf") == 0);          // overlong
  CATCH_CHECK(utf8_sequence_length("\xe0\x9f\xbf") == 0);      // overlong 3-byte
  CATCH_CHECK(utf8_sequence_length("\xed\xa0\x80") == 0);      // surrogate U+D800
  CATCH_CHECK(utf8_sequence_length("\xef\xbf\xbf") == 3);      // U+FFFF
  CATCH_CHECK(utf8_sequence_length("\xf4\x8f\xbf\xbf") == 4);  // U+10FFFF
  CATCH_CHECK(utf8_sequence_length("\xf4\x90\x80\x80") == 0);  // above U+10FFFF
  CATCH_CHECK(utf8_sequence_length("\xe2\x82") == 0);          // truncated
  CATCH_CHECK(attnbench::data::utf8_valid_prefix("abcdefghij\xc3\xa9z\xffq") == 13);
  CATCH_CHECK(attnbench::data::utf8_invalid_prefix("\xff\x80\xc3\xa9") == 2);
}
