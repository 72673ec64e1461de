// Shared helpers for the task tests: the data root (Skipped when ATTNBENCH_DATA is unset, fail loudly
// when it is set and a file is missing), temporary data roots for hub-format parity, and checks of
// multiple-choice Docs against strings written out by hand in each test.
#pragma once
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include "evals/tasks/task.h"
#include "tests/test_skip.h"

namespace attnbench::evals::test {

namespace fs = std::filesystem;

// $ATTNBENCH_DATA, or nullopt with the case reported Skipped (tests/test_skip.h).
inline std::optional<fs::path> data_root_or_skip() {
  return attnbench::testing::data_root_or_skip("this task test");
}

// Loads a task from the real data; a missing file throws UsageError, which fails the test.
inline std::vector<Doc> load(const std::string& task, const fs::path& root) {
  return find_task(task).load(root);
}

// A fresh, empty data root under the system temp dir, removed when this object dies.
class TempRoot {
 public:
  TempRoot() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("attnbench_tasks_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempRoot() { fs::remove_all(path_); }
  TempRoot(const TempRoot&) = delete;
  TempRoot& operator=(const TempRoot&) = delete;
  const fs::path& path() const { return path_; }

  // Writes `content` to <root>/<relative>, creating folders.
  void write(const std::string& relative, const std::string& content) const {
    const fs::path p = path_ / relative;
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out << content;
  }

 private:
  fs::path path_;
};

// A multiple-choice Doc with target delimiter " ": request i = (context, " " + choices[i]).
inline void check_mc(const Doc& doc, const std::string& context,
                     const std::vector<std::string>& choices, int gold) {
  CATCH_REQUIRE(doc.choices == choices);
  CATCH_REQUIRE(doc.requests.size() == choices.size());
  for (size_t i = 0; i < choices.size(); ++i) {
    CATCH_CHECK(doc.requests[i].context == context);
    CATCH_CHECK(doc.requests[i].continuation == " " + choices[i]);
  }
  CATCH_CHECK(doc.gold == gold);
}

// Two loads of the same split produce the same Docs (hub-format parity).
inline void check_same_docs(const std::vector<Doc>& a, const std::vector<Doc>& b) {
  CATCH_REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CATCH_INFO("doc " << i);
    CATCH_CHECK(a[i].index == b[i].index);
    CATCH_CHECK(a[i].gold == b[i].gold);
    CATCH_CHECK(a[i].choices == b[i].choices);
    CATCH_CHECK(a[i].text == b[i].text);
    CATCH_CHECK(a[i].word_count == b[i].word_count);
    CATCH_CHECK(a[i].byte_count == b[i].byte_count);
    CATCH_REQUIRE(a[i].requests.size() == b[i].requests.size());
    for (size_t r = 0; r < a[i].requests.size(); ++r) {
      CATCH_CHECK(a[i].requests[r].context == b[i].requests[r].context);
      CATCH_CHECK(a[i].requests[r].continuation == b[i].requests[r].continuation);
    }
  }
}

}  // namespace attnbench::evals::test
