// copa (lm_eval/tasks/super_glue/copa/default.yaml + utils.py): SuperGLUE COPA, validation split,
// 100 premises. utils.py:
//   doc_to_text   = premise.strip()[:-1] + " because" (question "cause") / " therefore" ("effect")
//   doc_to_choice = [" " + convert_choice(choice1), " " + convert_choice(choice2)]
//   convert_choice(c) = c[0].lower() + c[1:]
// The choices already begin with " " and the target delimiter adds another, so each continuation
// starts with TWO spaces (docs/tasks.md, "copa"); Doc.choices keep the one space.
// Official SuperGLUE val.jsonl and the hub export (aps/super_glue copa) share the row layout
// {"premise","choice1","choice2","question","label","idx"}.
#include "evals/tasks/py_text.h"
#include "evals/tasks/task_data.h"

namespace attnbench::evals {
namespace {

TaskFiles copa_files() {
  TaskFiles f;
  f.folder = "copa";
  f.official = "val.jsonl";
  f.official_layout =
      "SuperGLUE COPA JSONL {\"premise\", \"choice1\", \"choice2\", \"question\", \"label\", \"idx\"}";
  f.hub = {"hf_format/validation.jsonl"};
  f.hub_layout = "aps/super_glue copa JSONL: the same fields";
  return f;
}

const TaskFiles kFiles = copa_files();

// Python's s[:-1]: drop the last code point (not byte) of UTF-8 text.
std::string drop_last_code_point(const std::string& s) {
  size_t end = s.size();
  while (end > 0) {
    --end;
    if ((static_cast<unsigned char>(s[end]) & 0xC0) != 0x80) break;  // a lead byte
  }
  return s.substr(0, end);
}

// c[0].lower() + c[1:]; Python lower-cases a non-ASCII first letter too, which no COPA choice has
// (all ASCII), so only ASCII is lowered here (docs/tasks.md).
std::string convert_choice(const JsonRow& row, const std::string& c) {
  if (c.empty()) throw InputError(row.where, "empty choice (lm-eval's c[0] would fail)");
  std::string out = c;
  if (out[0] >= 'A' && out[0] <= 'Z') out[0] = static_cast<char>(out[0] - 'A' + 'a');
  return out;
}

std::vector<Doc> load_copa(const std::filesystem::path& root) {
  std::vector<Doc> docs;
  for (const auto& row : read_rows(root, kFiles)) {
    const std::string question = string_field(row, "question");
    if (question != "cause" && question != "effect") {
      throw InputError(row.where, "question must be \"cause\" or \"effect\", got '" + question + "'");
    }
    const std::string context = drop_last_code_point(py_strip(string_field(row, "premise"))) +
                                (question == "cause" ? " because" : " therefore");
    docs.push_back(multiple_choice_doc(static_cast<int64_t>(docs.size()), context,
                                       {" " + convert_choice(row, string_field(row, "choice1")),
                                        " " + convert_choice(row, string_field(row, "choice2"))},
                                       int_field(row, "label"), row.where));
  }
  return docs;
}

TaskSpec copa_task() {
  TaskSpec t;
  t.name = "copa";
  t.description = "COPA choice of plausible alternatives (validation, 100)";
  t.source.folder = kFiles.folder;
  t.source.dataset = "aps/super_glue";
  t.source.config = "copa";
  t.source.split = "validation";
  t.type = OutputType::MultipleChoice;
  t.metrics = {"acc"};
  t.paper_metric = "acc";
  t.load = load_copa;
  return t;
}

const RegisterTask kCopa(copa_task());

}  // namespace
}  // namespace attnbench::evals
