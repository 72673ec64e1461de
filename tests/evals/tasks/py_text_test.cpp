// Python str semantics used by the templates, worked by hand from the Python documentation.
#include <catch2/catch.hpp>

#include "evals/tasks/py_text.h"

using namespace attnbench::evals;

CATCH_TEST_CASE("py_text: strip/lstrip/rstrip use Python's Unicode whitespace") {
  CATCH_CHECK(py_strip(" \t\na b\r\n ") == "a b");
  CATCH_CHECK(py_strip("\u00a0\u3000x\u2009") == "x");  // no-break, ideographic, thin space
  CATCH_CHECK(py_strip("\x1cx\x1f") == "x");            // file/unit separators count in Python
  CATCH_CHECK(py_strip("\u200bx") == "\u200bx");        // zero-width space does not
  CATCH_CHECK(py_lstrip("  x  ") == "x  ");
  CATCH_CHECK(py_rstrip("  x  ") == "  x");
  CATCH_CHECK(py_strip("   ") == "");
  CATCH_CHECK(py_strip("") == "");
}

CATCH_TEST_CASE("py_text: replace is one left-to-right pass") {
  CATCH_CHECK(py_replace("a   b", "  ", " ") == "a  b");
  CATCH_CHECK(py_replace("aaaa", "aa", "a") == "aa");
  CATCH_CHECK(py_replace("= = = =", "= =", "==") == "== ==");
  CATCH_CHECK(py_replace("abc", "x", "y") == "abc");
}

CATCH_TEST_CASE("py_text: capitalize upper-cases the first letter and lowers the rest") {
  CATCH_CHECK(py_capitalize_ascii("hELLO wORLD") == "Hello world");
  CATCH_CHECK(py_capitalize_ascii("\" power Dribble") == "\" power dribble");
  CATCH_CHECK(py_capitalize_ascii("") == "");
}

CATCH_TEST_CASE("py_text: the word count of re.split on whitespace runs counts the empty edge pieces") {
  CATCH_CHECK(py_split_whitespace_count("") == 1);           // ['']
  CATCH_CHECK(py_split_whitespace_count("a") == 1);
  CATCH_CHECK(py_split_whitespace_count(" a b ") == 4);      // ['', 'a', 'b', '']
  CATCH_CHECK(py_split_whitespace_count("a  \n b") == 2);
  CATCH_CHECK(py_split_whitespace_count("a\u00a0b") == 2);   // no-break space is \s
  CATCH_CHECK(py_split_whitespace_count("\u675c\u752b") == 1);
}

CATCH_TEST_CASE("py_text: UTF-8 decoding, invalid bytes become U+FFFD") {
  const std::string s = "a\u00e9\u675c\U0001F600\xff";
  size_t pos = 0;
  CATCH_CHECK(next_code_point(s, pos) == U'a');
  CATCH_CHECK(next_code_point(s, pos) == U'\u00e9');
  CATCH_CHECK(next_code_point(s, pos) == U'\u675c');
  CATCH_CHECK(next_code_point(s, pos) == U'\U0001F600');
  CATCH_CHECK(next_code_point(s, pos) == 0xFFFD);
  CATCH_CHECK(pos == s.size());
}
