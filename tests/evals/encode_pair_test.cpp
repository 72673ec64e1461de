// lm-eval's _encode_pair boundary rules, checked with a hand-written "tokenizer" (a table from
// string to ids) so that each expected split follows from the rule alone:
//   trailing context whitespace moves to the continuation; cont = encode(ctx + cont)[len(encode(ctx)):].
#include <torch/torch.h>

#include <map>
#include <stdexcept>
#include <string>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "evals/encode_pair.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace encode_pair_test {

using namespace attnbench::evals;

namespace {

TextEncoder table(std::map<std::string, std::vector<int64_t>> entries) {
  return [entries](std::string_view text) {
    auto it = entries.find(std::string(text));
    if (it == entries.end()) throw std::logic_error("unexpected encode(\"" + std::string(text) + "\")");
    return it->second;
  };
}

}  // namespace

CATCH_TEST_CASE("trailing whitespace of the context moves to the continuation") {
  // "a " + "b": encode("a") and encode("a b") are asked for, never encode("a ").
  auto enc = table({{"a", {1}}, {"a b", {1, 6}}});
  TokenPair p = encode_pair("a ", "b", enc);
  CATCH_CHECK(p.context == std::vector<int64_t>{1});
  CATCH_CHECK(p.continuation == std::vector<int64_t>{6});

  // A newline and several spaces move too (Python's rstrip()).
  auto enc2 = table({{"Q", {5}}, {"Q\n  x", {5, 9, 4, 8}}});
  TokenPair q = encode_pair("Q\n  ", "x", enc2);
  CATCH_CHECK(q.context == std::vector<int64_t>{5});
  CATCH_CHECK(q.continuation == std::vector<int64_t>{9, 4, 8});

  // U+00A0 NO-BREAK SPACE is whitespace for Python's str.rstrip().
  auto enc3 = table({{"a", {1}}, {"a\u00a0b", {1, 11, 2}}});
  TokenPair r = encode_pair("a\u00a0", "b", enc3);
  CATCH_CHECK(r.context == std::vector<int64_t>{1});
  CATCH_CHECK(r.continuation == std::vector<int64_t>{11, 2});
}

CATCH_TEST_CASE("a merge across the boundary goes to the continuation") {
  // The context alone is one token "aa" (12); in the whole string BPE splits it as "a" + "ab".
  // The boundary is len(encode(ctx)) = 1, so the continuation holds the merged "ab" (7).
  auto enc = table({{"aa", {12}}, {"aab", {1, 7}}});
  TokenPair p = encode_pair("aa", "b", enc);
  CATCH_CHECK(p.context == std::vector<int64_t>{12});
  CATCH_CHECK(p.continuation == std::vector<int64_t>{7});

  // When the context's own encoding is as long as the whole's, the continuation is what is left.
  auto enc2 = table({{"xa", {8, 1}}, {"xab c", {8, 7, 3}}});
  TokenPair q = encode_pair("xa", "b c", enc2);
  CATCH_CHECK(q.context == std::vector<int64_t>{8, 1});
  CATCH_CHECK(q.continuation == std::vector<int64_t>{3});
}

CATCH_TEST_CASE("an empty context becomes the end-of-text prefix token") {
  auto enc = table({{"ab", {7}}, {"<ab", {kEndOfText, 7}}});
  TokenPair p = encode_pair("", "ab", enc);
  CATCH_CHECK(p.context == std::vector<int64_t>{kEndOfText});
  CATCH_CHECK(p.continuation == std::vector<int64_t>{7});
  // A continuation that already starts with the prefix token gives it up as the context.
  TokenPair q = encode_pair("", "<ab", enc);
  CATCH_CHECK(q.context == std::vector<int64_t>{kEndOfText});
  CATCH_CHECK(q.continuation == std::vector<int64_t>{7});
}

CATCH_TEST_CASE("the prepend BOS policy puts end-of-text before every context") {
  auto enc = table({{"a", {1}}, {"a b", {1, 6}}, {"ab", {7}}});
  TokenPair p = encode_pair("a ", "b", enc, BosPolicy::Prepend);
  CATCH_CHECK(p.context == std::vector<int64_t>{kEndOfText, 1});
  CATCH_CHECK(p.continuation == std::vector<int64_t>{6});
  TokenPair e = encode_pair("", "ab", enc, BosPolicy::Prepend);  // never twice
  CATCH_CHECK(e.context == std::vector<int64_t>{kEndOfText});
  CATCH_CHECK(e.continuation == std::vector<int64_t>{7});

  CATCH_CHECK(parse_bos_policy("none") == BosPolicy::None);
  CATCH_CHECK(parse_bos_policy("prepend") == BosPolicy::Prepend);
  CATCH_CHECK_THROWS_AS(parse_bos_policy("prepand"), attnbench::UsageError);
  CATCH_CHECK(std::string(to_string(BosPolicy::Prepend)) == "prepend");
}

}  // namespace encode_pair_test
