// A test that cannot run here (no data, no GPU) says so, and CTest reports it as Skipped rather
// than Passed: a Catch case prints kSkipMarker (tests/CMakeLists.txt gives every case that
// SKIP_REGULAR_EXPRESSION), a shell test exits 77 (SKIP_RETURN_CODE), a GPU test's main exits 77.
// A case that skips checks nothing after that point; the checks it made before still count
// (a failed one fails the case).
#pragma once
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

namespace attnbench::testing {

inline constexpr const char* kSkipMarker = "attnbench-test-skipped";

inline void skip_test(const std::string& why) {
  std::cout << kSkipMarker << ": " << why << std::endl;
}

// $ATTNBENCH_DATA (the shared data folder), or nullopt after skip_test: the test then checks nothing
// that needs the data. Where it is set, a file missing from it throws, which fails the test.
inline std::optional<std::filesystem::path> data_root_or_skip(const std::string& what) {
  const char* env = std::getenv("ATTNBENCH_DATA");
  if (!env || !*env) {
    skip_test(what + " needs ATTNBENCH_DATA (the shared data folder), which is unset");
    return std::nullopt;
  }
  return std::filesystem::path(env);
}

}  // namespace attnbench::testing
