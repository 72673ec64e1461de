// read_rows: the one place where an official release's layout becomes the hub export's rows
// (evals/tasks/task_data.h), driven through a TaskFiles of the test's own.
#include "tests/evals/tasks/task_test_util.h"

#include <sstream>

#include "core/common/error.h"
#include "evals/tasks/task_data.h"

using namespace attnbench;
using namespace attnbench::evals;
using namespace attnbench::evals::test;

namespace {

TaskFiles test_files() {
  TaskFiles f;
  f.folder = "t";
  f.official = "release.txt";
  f.official_layout = "a test layout";
  f.hub = {"hf_format/test.jsonl"};
  f.hub_layout = "test JSONL: {\"x\"}";
  return f;
}

// The official text layout of the test: one row {"x": line} per line.
std::vector<JsonRow> line_rows(const fs::path& file) {
  std::vector<JsonRow> rows;
  int line_no = 0;
  std::istringstream in(read_text(file));
  for (std::string line; std::getline(in, line);) {
    rows.push_back({{{"x", line}}, {file.string(), ++line_no}});
  }
  return rows;
}

void mark_processed(JsonRow& row) { row.value["processed"] = true; }

std::string error_of(const fs::path& root, const TaskFiles& files) {
  try {
    read_rows(root, files);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

CATCH_TEST_CASE("read_rows: the layout comes from the content, not the file name") {
  TempRoot root;
  TaskFiles files = test_files();
  files.official_text = line_rows;
  files.process_docs = mark_processed;
  root.write("t/release.txt", "{\"x\": \"a\"}\n{\"x\": \"b\"}\n");  // JSONL under the official name
  auto rows = read_rows(root.path(), files);
  CATCH_REQUIRE(rows.size() == 2);
  CATCH_CHECK(rows[1].value["x"] == "b");
  CATCH_CHECK(rows[1].value["processed"] == true);  // process_docs runs on every JSON row
  CATCH_CHECK(rows[1].where.str() == (root.path() / "t/release.txt").string() + ":2");
  root.write("t/release.txt", "  [{\"x\": \"a\"}, {\"x\": \"b\"}]");  // one JSON array
  rows = read_rows(root.path(), files);
  CATCH_REQUIRE(rows.size() == 2);
  CATCH_CHECK(rows[0].value["processed"] == true);
  CATCH_CHECK_THAT(rows[1].where.str(), Catch::Matchers::EndsWith("release.txt [element 1]"));
  root.write("t/release.txt", "plain\ntext\n");  // the official text layout
  rows = read_rows(root.path(), files);
  CATCH_REQUIRE(rows.size() == 2);
  CATCH_CHECK(rows[0].value["x"] == "plain");
  CATCH_CHECK_FALSE(rows[0].value.contains("processed"));  // the reader's rows are final
}

CATCH_TEST_CASE("read_rows: text without a text layout, and an array element that is no object") {
  TempRoot root;
  root.write("t/release.txt", "plain text\n");
  CATCH_CHECK_THAT(error_of(root.path(), test_files()),
                   Catch::Matchers::Contains("release.txt:1") &&
                       Catch::Matchers::Contains("expected JSONL"));
  root.write("t/release.txt", "[{\"x\": 1}, 2]");
  CATCH_CHECK_THAT(error_of(root.path(), test_files()),
                   Catch::Matchers::Contains("[element 1]") &&
                       Catch::Matchers::Contains("expected a JSON object"));
}

CATCH_TEST_CASE("read_rows: boolean fields become 0/1 in every spelling, anything else is refused") {
  TempRoot root;
  TaskFiles files = test_files();
  files.boolean_fields = {"label"};
  root.write("t/hf_format/test.jsonl",
             "{\"label\": \"true\"}\n{\"label\": \"False\"}\n{\"label\": true}\n{\"label\": 0}\n"
             "{\"label\": 1}\n");
  const auto rows = read_rows(root.path(), files);
  std::vector<int> labels;
  for (const auto& row : rows) labels.push_back(int_field(row, "label"));
  CATCH_CHECK(labels == std::vector<int>{1, 0, 1, 0, 1});
  root.write("t/hf_format/test.jsonl", "{\"label\": 1}\n{\"label\": 2}\n");
  CATCH_CHECK_THAT(error_of(root.path(), files),
                   Catch::Matchers::Contains("test.jsonl:2") && Catch::Matchers::Contains("'label'"));
  root.write("t/hf_format/test.jsonl", "{\"other\": 1}\n");
  CATCH_CHECK_THAT(error_of(root.path(), files), Catch::Matchers::Contains("missing field 'label'"));
}

CATCH_TEST_CASE("wikitext: a hub export saved under the raw file's name loads as rows") {
  TempRoot hub, renamed;
  const std::string rows = "{\"page\": \" = A = \\n x , y \\n\"}\n{\"page\": \" = C = \\n\"}\n";
  hub.write("wikitext2/hf_format/test.jsonl", rows);
  renamed.write("wikitext2/wiki.test.raw", rows);
  check_same_docs(load("wikitext", renamed.path()), load("wikitext", hub.path()));
  CATCH_CHECK(load("wikitext", renamed.path()).size() == 2);
}
