// openbookqa (lm_eval/tasks/openbookqa/openbookqa.yaml): allenai/openbookqa "main", test split, 500.
// Template: doc_to_text = question_stem (the raw field, no prefix), choices choices.text,
// gold choices.label.index(answerKey.lstrip()).
// Official release Main/test.jsonl has AI2's layout {"id","question":{"stem","choices"},"answerKey"};
// the hub export has {"id","question_stem","choices":{"text","label"},"answerKey"} (ai2_question.h).
#include "evals/tasks/ai2_question.h"
#include "evals/tasks/py_text.h"

namespace attnbench::evals {
namespace {

TaskFiles openbookqa_files() {
  TaskFiles f;
  f.folder = "openbookqa";
  f.official = "test.jsonl";
  f.official_layout =
      "OpenBookQA-V1-Sep2018 Main JSONL {\"id\", \"question\": {\"stem\", \"choices\": [{\"text\", "
      "\"label\"}]}, \"answerKey\"}";
  f.hub = {"hf_format/test.jsonl"};
  f.hub_layout =
      "allenai/openbookqa main JSONL: {\"id\", \"question_stem\", \"choices\": {\"text\", "
      "\"label\"}, \"answerKey\"}";
  return f;
}

const TaskFiles kFiles = openbookqa_files();

std::vector<Doc> load_openbookqa(const std::filesystem::path& root) {
  std::vector<Doc> docs;
  for (const auto& row : read_rows(root, kFiles)) {
    const auto q = read_ai2_question(row, "question_stem");
    const int gold = ai2_gold(row, q, py_lstrip(q.answer_key));
    docs.push_back(
        multiple_choice_doc(static_cast<int64_t>(docs.size()), q.stem, q.texts, gold, row.where));
  }
  return docs;
}

TaskSpec openbookqa_task() {
  TaskSpec t;
  t.name = "openbookqa";
  t.description = "OpenBookQA elementary science (test, 500)";
  t.source.folder = kFiles.folder;
  t.source.dataset = "allenai/openbookqa";
  t.source.config = "main";
  t.source.split = "test";
  t.type = OutputType::MultipleChoice;
  t.metrics = {"acc", "acc_norm"};
  t.paper_metric = "acc_norm";
  t.load = load_openbookqa;
  return t;
}

const RegisterTask kOpenbookqa(openbookqa_task());

}  // namespace
}  // namespace attnbench::evals
