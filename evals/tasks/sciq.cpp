// sciq (lm_eval/tasks/sciq/sciq.yaml): allenai/sciq, test split, 1000 questions.
// Template: "{{support.lstrip()}}\nQuestion: {{question}}\nAnswer:",
// choices [distractor1, distractor2, distractor3, correct_answer], gold 3 (always the last).
// Official release: test.json, ONE JSON array of {"question","distractor1".."3","correct_answer",
// "support"}; hub export: the same objects one per line (JSONL).
#include "evals/tasks/py_text.h"
#include "evals/tasks/task_data.h"

namespace attnbench::evals {
namespace {

const TaskFiles kFiles = {
    "sciq", "test.json",
    "SciQ release JSON array of {\"question\", \"distractor1\", \"distractor2\", \"distractor3\", "
    "\"correct_answer\", \"support\"}",
    {"hf_format/test.jsonl"},
    "allenai/sciq JSONL: the same fields, one object per line"};

std::vector<Doc> load_sciq(const std::filesystem::path& root) {
  const auto file = locate(root, kFiles);
  // The layout is read from the content: a file starting with '[' is the release's one array,
  // otherwise one object per line (the hub export, under either name).
  const std::string text = read_text(file.path);
  const size_t first = text.find_first_not_of(" \t\r\n");
  std::vector<JsonRow> rows;
  if (first != std::string::npos && text[first] == '[') {
    const auto all = read_json(file.path);
    if (!all.is_array()) throw InputError({file.path.string()}, "expected one JSON array of questions");
    for (size_t i = 0; i < all.size(); ++i) {
      // No line numbers inside one array: name the element instead.
      rows.push_back({all[i], {file.path.string() + " [element " + std::to_string(i) + "]"}});
    }
  } else {
    rows = read_jsonl(file.path);
  }
  std::vector<Doc> docs;
  for (const auto& row : rows) {
    const std::string context = py_lstrip(string_field(row, "support")) + "\nQuestion: " +
                                string_field(row, "question") + "\nAnswer:";
    docs.push_back(multiple_choice_doc(
        static_cast<int64_t>(docs.size()), context,
        {string_field(row, "distractor1"), string_field(row, "distractor2"),
         string_field(row, "distractor3"), string_field(row, "correct_answer")},
        3, row.where));
  }
  return docs;
}

TaskSpec sciq_task() {
  TaskSpec t;
  t.name = "sciq";
  t.description = "SciQ science exam questions with support text (test, 1000)";
  t.source.folder = kFiles.folder;
  t.source.dataset = "allenai/sciq";
  t.source.config = "default";
  t.source.split = "test";
  t.type = OutputType::MultipleChoice;
  t.metrics = {"acc", "acc_norm"};
  t.paper_metric = "acc_norm";
  t.load = load_sciq;
  return t;
}

const RegisterTask kSciq(sciq_task());

}  // namespace
}  // namespace attnbench::evals
