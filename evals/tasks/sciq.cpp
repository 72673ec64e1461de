// sciq (lm_eval/tasks/sciq/sciq.yaml): allenai/sciq, test split, 1000 questions.
// Template: "{{support.lstrip()}}\nQuestion: {{question}}\nAnswer:",
// choices [distractor1, distractor2, distractor3, correct_answer], gold 3 (always the last).
// Official release: test.json, ONE JSON array of {"question","distractor1".."3","correct_answer",
// "support"}; hub export: the same objects one per line (JSONL). read_rows reads either.
#include "evals/tasks/py_text.h"
#include "evals/tasks/task_data.h"

namespace attnbench::evals {
namespace {

TaskFiles sciq_files() {
  TaskFiles f;
  f.folder = "sciq";
  f.official = "test.json";
  f.official_layout =
      "SciQ release JSON array of {\"question\", \"distractor1\", \"distractor2\", "
      "\"distractor3\", \"correct_answer\", \"support\"}";
  f.hub = {"hf_format/test.jsonl"};
  f.hub_layout = "allenai/sciq JSONL: the same fields, one object per line";
  return f;
}

const TaskFiles kFiles = sciq_files();

std::vector<Doc> load_sciq(const std::filesystem::path& root) {
  std::vector<Doc> docs;
  for (const auto& row : read_rows(root, kFiles)) {
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
