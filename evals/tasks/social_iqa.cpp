// social_iqa (lm_eval/tasks/siqa/siqa.yaml, task name social_iqa): Social IQa, validation split,
// 1954 questions. Template: "Q: {{context}} {{question}}\nA:", choices [answerA, answerB, answerC],
// gold (label|int) - 1, target_delimiter " " (set explicitly, same as the default).
// Official release (data folder siqa): dev.jsonl {"context","question","answerA","answerB",
// "answerC"} + dev-labels.lst (1/2/3); hub export (lighteval/siqa): the same fields plus
// "label": "1".."3". A first row without "label" is an official row, its label read from the
// labels file (read_labelled_rows).
#include "evals/tasks/task_data.h"

namespace attnbench::evals {
namespace {

TaskFiles siqa_files() {
  TaskFiles f;
  f.folder = "siqa";
  f.official = "dev.jsonl";
  f.official_layout =
      "Social IQa JSONL {\"context\", \"question\", \"answerA\", \"answerB\", \"answerC\"} + "
      "dev-labels.lst";
  f.hub = {"hf_format/validation.jsonl"};
  f.hub_layout =
      "lighteval/siqa JSONL: {\"context\", \"question\", \"answerA\", \"answerB\", \"answerC\", "
      "\"label\"}";
  return f;
}

const TaskFiles kFiles = siqa_files();

const LabelsFile kLabels = {"dev-labels.lst", "one label per line, 1/2/3 = answerA/B/C", "label", ""};

std::vector<Doc> load_social_iqa(const std::filesystem::path& root) {
  std::vector<Doc> docs;
  for (const JsonRow& row : read_labelled_rows(root, kFiles, kLabels)) {
    const std::string context =
        "Q: " + string_field(row, "context") + " " + string_field(row, "question") + "\nA:";
    docs.push_back(multiple_choice_doc(
        static_cast<int64_t>(docs.size()), context,
        {string_field(row, "answerA"), string_field(row, "answerB"), string_field(row, "answerC")},
        int_field(row, "label") - 1, row.where));
  }
  return docs;
}

TaskSpec social_iqa_task() {
  TaskSpec t;
  t.name = "social_iqa";
  t.description = "Social IQa social commonsense (validation, 1954)";
  t.source.folder = kFiles.folder;
  t.source.dataset = "lighteval/siqa";
  t.source.config = "default";
  t.source.split = "validation";
  t.type = OutputType::MultipleChoice;
  t.metrics = {"acc"};
  t.paper_metric = "acc";
  t.load = load_social_iqa;
  return t;
}

const RegisterTask kSocialIqa(social_iqa_task());

}  // namespace
}  // namespace attnbench::evals
