// WikiText: page splitting (EleutherAI/wikitext_document_level's script) and lm-eval's
// wikitext_detokenizer. Small cases are worked by hand; the whole-file numbers (word and byte
// counts, sha256 of the detokenised pages) come from running lm-eval's own Python functions
// (preprocess_wikitext.py and the dataset script's _generate_examples) on wiki.test.raw.
#include "tests/evals/tasks/task_test_util.h"

#include "core/common/sha256.h"
#include "evals/tasks/wikitext.h"

using namespace attnbench;
using namespace attnbench::evals;
using namespace attnbench::evals::test;

namespace {
bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}
const char* kRaw = " \n = A = \n \n x , y \n = = B = = \n z \n = C = \n w . \n \n";
}  // namespace

CATCH_TEST_CASE("wikitext: pages split at article titles, not section headings") {
  // Lines: " ", " = A = ", " ", " x , y ", " = = B = = ", " z ", " = C = ", " w . ", " ", "".
  // The whitespace-only page before "= A =" is dropped; the last page keeps its final "" line.
  const auto pages = wikitext_pages(kRaw);
  CATCH_REQUIRE(pages.size() == 2);
  CATCH_CHECK(pages[0] == " = A = \n \n x , y \n = = B = = \n z ");
  CATCH_CHECK(pages[1] == " = C = \n w . \n \n");
  // CRLF is read as Python's text mode does.
  CATCH_CHECK(wikitext_pages(" = A = \r\n x \r\n") == std::vector<std::string>{" = A = \n x \n"});
}

CATCH_TEST_CASE("wikitext: detokenizer rules, worked by hand") {
  CATCH_CHECK(wikitext_detokenize(" = A = \n \n x , y \n = = B = = \n z ") ==
              " = A =\n\nx, y\n== B ==\nz ");
  CATCH_CHECK(wikitext_detokenize("a guest @-@ starring 1 @,@ 000 3 @.@ 5") ==
              "a guest-starring 1,000 3.5");
  CATCH_CHECK(wikitext_detokenize("x : y ; z ! w ? v . u") == "x: y; z! w? v. u");
  CATCH_CHECK(wikitext_detokenize("as \" Craig \" in ( film ) [ 1 ] { a }") ==
              "as \"Craig\" in (film) [1] {a}");
  // An opening mark with no closing one after it is left alone.
  CATCH_CHECK(wikitext_detokenize("a ( b") == "a ( b");
  // The players ' union: "s '" -> "s'"; a lone ' 's is fixed by the last rule.
  CATCH_CHECK(wikitext_detokenize("the players ' union") == "the players' union");
  CATCH_CHECK(wikitext_detokenize("He 's here") == "He's here");
  // re.sub(r"/' [0-9]/", r"/'[0-9]/"): the replacement is literal text.
  CATCH_CHECK(wikitext_detokenize("a/' 5/b") == "a/'[0-9]/b");
  CATCH_CHECK(wikitext_detokenize("10 \u00b0 C") == "10\u00b0C");
  CATCH_CHECK(wikitext_detokenize("a N b") == "a 1 b");
  CATCH_CHECK(wikitext_detokenize("= = = = x = = = =") == "==== x ====");
}

CATCH_TEST_CASE("wikitext: hub rows {page} give the same docs as the raw file") {
  TempRoot raw;
  raw.write("wikitext2/wiki.test.raw", kRaw);
  TempRoot hub;
  hub.write("wikitext2/hf_format/test.jsonl",
            "{\"page\": \" = A = \\n \\n x , y \\n = = B = = \\n z \"}\n"
            "{\"page\": \" = C = \\n w . \\n \\n\"}\n");
  const auto docs = load("wikitext", raw.path());
  CATCH_REQUIRE(docs.size() == 2);
  CATCH_CHECK(docs[0].text == " = A =\n\nx, y\n== B ==\nz ");
  CATCH_CHECK(docs[1].text == " = C =\nw.\n\n");
  CATCH_REQUIRE(docs[0].requests.size() == 1);
  CATCH_CHECK(docs[0].requests[0].context == "");
  CATCH_CHECK(docs[0].requests[0].continuation == docs[0].text);
  // Counted on the original page: re.split(r"\s+") gives '', 12 tokens, '' and '', 5 tokens, ''.
  CATCH_CHECK(docs[0].word_count == 14);
  CATCH_CHECK(docs[0].byte_count == 33);
  CATCH_CHECK(docs[1].word_count == 7);
  CATCH_CHECK(docs[1].byte_count == 16);
  check_same_docs(load("wikitext", hub.path()), docs);
}

CATCH_TEST_CASE("wikitext: 62 pages of wiki.test.raw, pinned against lm-eval's Python") {
  auto root = data_root_or_skip();
  if (!root) return;
  const auto docs = load("wikitext", *root);
  CATCH_REQUIRE(docs.size() == 62);
  // First page, from lines 2-4 of wiki.test.raw by the rules above.
  CATCH_CHECK(starts_with(docs[0].text,
                          " = Robert Boulter =\n\nRobert Boulter is an English film, television and "
                          "theatre actor. He had a guest-starring role on the television series The "
                          "Bill in 2000. This was followed by a starring role in the play Herons "
                          "written by Simon Stephens, which was performed in 2001 at the Royal Court "
                          "Theatre."));
  // Second page (line 33): non-ASCII inside tightened parentheses.
  CATCH_CHECK(starts_with(docs[1].text,
                          " = Du Fu =\n\nDu Fu (Wade \u2013 Giles: Tu Fu; Chinese: \u675c\u752b; 712 "
                          "\u2013 770) was a prominent Chinese poet of the Tang dynasty."));
  CATCH_CHECK(starts_with(docs[61].text,
                          " = The Hustler (film) =\n\nThe Hustler is a 1961 American drama film "
                          "directed by Robert Rossen from Walter Tevis's 1959 novel of the same name"));
  CATCH_CHECK(ends_with(docs[61].text, "Ed Taylor, Ed Parker, and Eddie Pelkey.\n\n"));
  // len(re.split(r"\s+", page)) and len(page.encode()) from lm-eval's process_results.
  CATCH_CHECK(docs[0].word_count == 1093);
  CATCH_CHECK(docs[0].byte_count == 5667);
  CATCH_CHECK(docs[1].word_count == 4751);
  CATCH_CHECK(docs[1].byte_count == 24540);
  CATCH_CHECK(docs[61].word_count == 3479);
  CATCH_CHECK(docs[61].byte_count == 17903);
  int64_t words = 0, bytes = 0;
  std::string joined;
  for (size_t i = 0; i < docs.size(); ++i) {
    words += docs[i].word_count;
    bytes += docs[i].byte_count;
    if (i) joined += '\0';
    joined += docs[i].text;
  }
  CATCH_CHECK(words == 241335);
  CATCH_CHECK(bytes == 1290527);
  // sha256("\0".join(wikitext_detokenizer({"page": p}) for p in pages)) in Python.
  CATCH_CHECK(sha256_hex(joined) ==
              "b0ae50e166add20959a5406d9b3c99fe1f23819ec0a10149047149434fb85d81");
}
