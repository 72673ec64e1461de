// social_iqa (lm_eval/tasks/siqa/siqa.yaml, task name social_iqa): Social IQa, validation split,
// 1954 questions. Template: "Q: {{context}} {{question}}\nA:", choices [answerA, answerB, answerC],
// gold (label|int) - 1, target_delimiter " " (set explicitly, same as the default).
// Official release (data folder siqa): dev.jsonl {"context","question","answerA","answerB",
// "answerC"} + dev-labels.lst (1/2/3); hub export (lighteval/siqa): the same fields plus
// "label": "1".."3". A first row with "label" is a hub row.
#include "evals/tasks/task_data.h"

namespace attnbench::evals {
namespace {

const TaskFiles kFiles = {
    "siqa", "dev.jsonl",
    "Social IQa JSONL {\"context\", \"question\", \"answerA\", \"answerB\", \"answerC\"} + "
    "dev-labels.lst",
    {"hf_format/validation.jsonl"},
    "lighteval/siqa JSONL: {\"context\", \"question\", \"answerA\", \"answerB\", \"answerC\", "
    "\"label\"}"};

std::vector<Doc> load_social_iqa(const std::filesystem::path& root) {
  const auto file = locate(root, kFiles);
  const auto rows = read_jsonl(file.path);
  const bool hub = !rows.empty() && has_field(rows[0], "label");
  std::vector<int> labels;
  if (!hub) {
    labels = read_labels(require_file(root, kFiles.folder, "dev-labels.lst",
                                      "one label per line, 1/2/3 = answerA/B/C"),
                         rows.size());
  }
  std::vector<Doc> docs;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const std::string context =
        "Q: " + string_field(row, "context") + " " + string_field(row, "question") + "\nA:";
    const int label = hub ? int_field(row, "label") : labels[i];
    docs.push_back(multiple_choice_doc(
        static_cast<int64_t>(i), context,
        {string_field(row, "answerA"), string_field(row, "answerB"), string_field(row, "answerC")},
        label - 1, row.where));
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
