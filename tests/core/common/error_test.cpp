// terminal_safe and one_line (core/common/error.h): what the CLI prints of every error. Line breaks
// and tabs stay (messages span lines; one_line escapes them too), every other control character and the C1 controls are escaped, and text
// outside them, UTF-8 included, is unchanged.
#include <string>

#include <catch2/catch.hpp>

#include "core/common/error.h"

using attnbench::terminal_safe;

CATCH_TEST_CASE("terminal_safe escapes control characters but keeps lines, tabs and UTF-8") {
  CATCH_CHECK(terminal_safe("unknown key model.\x1b[31mred") == "unknown key model.\\x1b[31mred");
  CATCH_CHECK(terminal_safe(std::string("a\0b\rc\x7f", 6)) == "a\\x00b\\x0dc\\x7f");
  CATCH_CHECK(terminal_safe("two\nlines\tand a tab") == "two\nlines\tand a tab");
  CATCH_CHECK(terminal_safe("csi \xc2\x9b and nel \xc2\x85") == "csi \\u009b and nel \\u0085");
  CATCH_CHECK(terminal_safe("caf\xc3\xa9 \xc2\xa0 \xe2\x80\x94 \xf0\x9f\x99\x82") ==
              "caf\xc3\xa9 \xc2\xa0 \xe2\x80\x94 \xf0\x9f\x99\x82");
  CATCH_CHECK(terminal_safe("ends with \xc2") == "ends with \xc2");  // a cut sequence stays as is
}

CATCH_TEST_CASE("one_line also writes line breaks, tabs and carriage returns as escapes") {
  CATCH_CHECK(attnbench::one_line("a\nb\tc\rd\x1b") == "a\\nb\\tc\\rd\\x1b");
  CATCH_CHECK(attnbench::one_line("\xc2\x9b" "31m \xc3\xa9") == "\\u009b31m \xc3\xa9");
}
