// boolq (lm_eval/tasks/super_glue/boolq/default.yaml): SuperGLUE BoolQ, validation split, 3270.
// Template: "{{passage}}\nQuestion: {{question}}?\nAnswer:", choices ["no", "yes"], gold label.
// Official SuperGLUE file val.jsonl: {"question","passage","idx","label"} where this copy's label is
// the string "true"/"false"; the hub export (aps/super_glue boolq) has label 0/1. read_rows turns
// either spelling, and JSON booleans, into 0/1 (true -> 1 = "yes").
#include "evals/tasks/task_data.h"

namespace attnbench::evals {
namespace {

TaskFiles boolq_files() {
  TaskFiles f;
  f.folder = "boolq";
  f.official = "val.jsonl";
  f.official_layout =
      "SuperGLUE BoolQ JSONL {\"question\", \"passage\", \"idx\", \"label\": \"true\"|\"false\"}";
  f.hub = {"hf_format/validation.jsonl"};
  f.hub_layout = "aps/super_glue boolq JSONL: {\"question\", \"passage\", \"idx\", \"label\": 0|1}";
  f.boolean_fields = {"label"};
  return f;
}

const TaskFiles kFiles = boolq_files();

std::vector<Doc> load_boolq(const std::filesystem::path& root) {
  std::vector<Doc> docs;
  for (const auto& row : read_rows(root, kFiles)) {
    const std::string context = string_field(row, "passage") + "\nQuestion: " +
                                string_field(row, "question") + "?\nAnswer:";
    docs.push_back(multiple_choice_doc(static_cast<int64_t>(docs.size()), context, {"no", "yes"},
                                       int_field(row, "label"), row.where));
  }
  return docs;
}

TaskSpec boolq_task() {
  TaskSpec t;
  t.name = "boolq";
  t.description = "BoolQ yes/no questions over a passage (validation, 3270)";
  t.source.folder = kFiles.folder;
  t.source.dataset = "aps/super_glue";
  t.source.config = "boolq";
  t.source.split = "validation";
  t.type = OutputType::MultipleChoice;
  t.metrics = {"acc"};
  t.paper_metric = "acc";
  t.load = load_boolq;
  return t;
}

const RegisterTask kBoolq(boolq_task());

}  // namespace
}  // namespace attnbench::evals
