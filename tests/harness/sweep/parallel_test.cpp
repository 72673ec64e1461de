// --jobs (harness/sweep/parallel.h): where a running cell is, read from the last line of its log.
#include <torch/torch.h>  // before catch.hpp (docs/toolchain.md: glog's CHECK)

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "harness/sweep/parallel.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace parallel_test {

namespace fs = std::filesystem;
using attnbench::sweep::last_log_line;

namespace {
fs::path write_log(const std::string& name, const std::string& text) {
  const fs::path p = fs::temp_directory_path() / ("attnbench_parallel_" + std::to_string(::getpid()) + name);
  std::ofstream(p, std::ios::binary) << text;
  return p;
}
}  // namespace

CATCH_TEST_CASE("last_log_line: the last non-empty line, a progress bar redrawn in place included") {
  const fs::path plain = write_log("plain", "[abc] lazy: starting\nstep 10/50 | loss 5.1\n\n");
  CATCH_CHECK(last_log_line(plain) == "step 10/50 | loss 5.1");
  const fs::path bar = write_log("bar", "evaluating\rpiqa 10/40 requests\rpiqa 20/40 requests");
  CATCH_CHECK(last_log_line(bar) == "piqa 20/40 requests");
  // Only the last 4 KiB are read: a long log costs nothing, its last line is still whole.
  const fs::path longer = write_log("long", std::string(100000, 'x') + "\nthe end\n");
  CATCH_CHECK(last_log_line(longer) == "the end");
  const fs::path empty = write_log("empty", " \n\n");
  CATCH_CHECK(last_log_line(empty).empty());
  CATCH_CHECK(last_log_line(fs::temp_directory_path() / "attnbench_no_such_log").empty());
  for (const fs::path& p : {plain, bar, longer, empty}) fs::remove(p);
}

}  // namespace parallel_test
