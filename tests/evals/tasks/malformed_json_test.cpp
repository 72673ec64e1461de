// Task files whose JSON holds a number too large for a double ("1e999"): nlohmann reports it as
// out_of_range, not as a parse error, and the loaders must still report an InputError naming the
// file (and the line, for JSONL), never the raw library exception. Found by the task_jsonl fuzz
// target (tests/fuzz/task_jsonl_fuzz.cpp), whose corpus keeps the input.
#include "tests/evals/tasks/task_test_util.h"

#include "core/common/error.h"

using namespace attnbench;
using namespace attnbench::evals::test;

namespace {

// The message of the InputError that loading `task` from `root` throws ("" when it loads).
std::string load_error(const std::string& task, const TempRoot& root) {
  try {
    load(task, root.path());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

CATCH_TEST_CASE("task files: a number too large for a double is malformed JSON at its line") {
  TempRoot jsonl;
  jsonl.write("boolq/val.jsonl",
              R"({"question": "q", "passage": "p", "idx": 0, "label": "true"})"
              "\n"
              R"({"question": "q", "passage": "p", "idx": 9E999, "label": "true"})"
              "\n");
  const std::string row = load_error("boolq", jsonl);
  CATCH_CHECK_THAT(row, Catch::Matchers::Contains("val.jsonl:2") &&
                            Catch::Matchers::Contains("malformed JSON"));
  TempRoot array;
  array.write("sciq/test.json", R"([{"question": 1e999}])");
  CATCH_CHECK_THAT(load_error("sciq", array), Catch::Matchers::Contains("test.json") &&
                                                  Catch::Matchers::Contains("malformed JSON"));
}
