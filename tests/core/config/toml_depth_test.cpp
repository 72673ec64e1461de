// TOML nesting is bounded before parsing (core/config/toml_depth.h): a key of tens of thousands of
// dotted parts crashed every TOML reader with SIGSEGV (stack depth); it is now an InputError at the
// line and column where the key passes the bound. Strings, comments and floats do not count.
#include <string>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "core/config/run_config.h"
#include "core/config/toml_depth.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace toml_depth_test {

using namespace attnbench;
using attnbench::config::check_toml_depth;
using attnbench::config::kMaxKeyParts;

namespace {

std::string dotted(int parts) {
  std::string key = "k";
  for (int i = 1; i < parts; ++i) key += ".k";
  return key;
}

std::string refusal(const std::string& text) {
  try {
    check_toml_depth(text, "c.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

CATCH_TEST_CASE("toml depth: keys up to the bound pass, one part more is refused where it starts") {
  CATCH_CHECK(refusal(dotted(kMaxKeyParts) + " = 1\n").empty());
  CATCH_CHECK(refusal("[" + dotted(kMaxKeyParts) + "]\nx = 1\n").empty());
  const std::string deep = "# a comment\n[model]\n" + dotted(kMaxKeyParts + 1) + " = 1\n";
  // The 65th part's dot is column 2 * 64 = 128 of line 3.
  CATCH_CHECK(refusal(deep) == "c.toml:3:128: a key with more than 64 dotted parts; no config nests "
                               "this deep (refused before parsing)");
  CATCH_CHECK(!refusal("[[" + dotted(kMaxKeyParts + 1) + "]]\n").empty());
  CATCH_CHECK(!refusal("x = {" + dotted(kMaxKeyParts + 1) + " = 1}\n").empty());
  CATCH_CHECK(!refusal(dotted(40) + ".\"quoted.part\"." + dotted(40) + " = 1\n").empty());
}

CATCH_TEST_CASE("toml depth: dots in strings, comments and values do not count") {
  const std::string dots(5000, '.');
  CATCH_CHECK(refusal("a = \"" + dots + "\"\n").empty());
  CATCH_CHECK(refusal("a = '" + dots + "'\n").empty());
  CATCH_CHECK(refusal("a = \"\"\"\n" + dots + "\n\"\"\"\n").empty());
  CATCH_CHECK(refusal("a = '''\n" + dots + "\n'''\n").empty());
  CATCH_CHECK(refusal("a = \"esc \\\" " + dots + "\"\n").empty());  // an escaped quote
  CATCH_CHECK(refusal("# " + dots + "\n").empty());
  std::string floats = "a = [";
  for (int i = 0; i < 1000; ++i) floats += "1.5, ";
  CATCH_CHECK(refusal(floats + "]\n").empty());
  CATCH_CHECK(refusal("d = 2024-01-01T00:00:00.123Z\nlr = 3.0e-4\n").empty());
}

CATCH_TEST_CASE("toml depth: a run config and --set with 60,000 dotted parts are refused, not a crash") {
  const std::string deep = dotted(60000);
  CATCH_CHECK_THROWS_AS(config::parse_run_config("[model]\n" + deep + " = 1\n", "c.toml"), InputError);
  CATCH_CHECK_THROWS_AS(config::parse_run_config("", "c.toml", {deep + "=1"}), InputError);
}

}  // namespace toml_depth_test
