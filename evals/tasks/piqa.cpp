// piqa (lm_eval/tasks/piqa/piqa.yaml): physical commonsense, validation split, 1838 goals.
// Template: "Question: {{goal}}\nAnswer:", choices [sol1, sol2], gold label.
// Official release: valid.jsonl {"goal","sol1","sol2"} + valid-labels.lst (0/1, one per line);
// hub export (baber/piqa): rows {"goal","sol1","sol2","label"}. A first row without "label" is
// an official row, its label read from the labels file (read_labelled_rows).
#include "evals/tasks/task_data.h"

namespace attnbench::evals {
namespace {

TaskFiles piqa_files() {
  TaskFiles f;
  f.folder = "piqa";
  f.official = "valid.jsonl";
  f.official_layout = "official PIQA JSONL {\"goal\", \"sol1\", \"sol2\"} + valid-labels.lst";
  f.hub = {"hf_format/validation.jsonl"};
  f.hub_layout = "baber/piqa JSONL: {\"goal\", \"sol1\", \"sol2\", \"label\"}";
  return f;
}

const TaskFiles kFiles = piqa_files();

const LabelsFile kLabels = {"valid-labels.lst", "one label per line, 0 = sol1, 1 = sol2", "label", ""};

std::vector<Doc> load_piqa(const std::filesystem::path& root) {
  std::vector<Doc> docs;
  for (const JsonRow& row : read_labelled_rows(root, kFiles, kLabels)) {
    docs.push_back(multiple_choice_doc(static_cast<int64_t>(docs.size()),
                                       "Question: " + string_field(row, "goal") + "\nAnswer:",
                                       {string_field(row, "sol1"), string_field(row, "sol2")},
                                       int_field(row, "label"), row.where));
  }
  return docs;
}

TaskSpec piqa_task() {
  TaskSpec t;
  t.name = "piqa";
  t.description = "PIQA physical commonsense (validation, 1838)";
  t.source.folder = kFiles.folder;
  t.source.dataset = "baber/piqa";
  t.source.config = "default";
  t.source.split = "validation";
  t.type = OutputType::MultipleChoice;
  t.metrics = {"acc", "acc_norm"};
  t.paper_metric = "acc_norm";
  t.load = load_piqa;
  return t;
}

const RegisterTask kPiqa(piqa_task());

}  // namespace
}  // namespace attnbench::evals
