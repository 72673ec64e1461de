// boolq (lm_eval/tasks/super_glue/boolq/default.yaml): SuperGLUE BoolQ, validation split, 3270.
// Template: "{{passage}}\nQuestion: {{question}}?\nAnswer:", choices ["no", "yes"], gold label.
// Official SuperGLUE file val.jsonl: {"question","passage","idx","label"} where this copy's label is
// the string "true"/"false"; the hub export (aps/super_glue boolq) has label 0/1. Both, and JSON
// booleans, are read per row (true/1 -> "yes", index 1).
#include "evals/tasks/task_data.h"

namespace attnbench::evals {
namespace {

const TaskFiles kFiles = {
    "boolq", "val.jsonl",
    "SuperGLUE BoolQ JSONL {\"question\", \"passage\", \"idx\", \"label\": \"true\"|\"false\"}",
    {"hf_format/validation.jsonl"},
    "aps/super_glue boolq JSONL: {\"question\", \"passage\", \"idx\", \"label\": 0|1}"};

int boolq_gold(const JsonRow& row) {
  const auto& label = field(row, "label");
  if (label.is_boolean()) return label.get<bool>() ? 1 : 0;
  if (label.is_string()) {
    const auto s = label.get<std::string>();
    if (s == "true" || s == "True") return 1;
    if (s == "false" || s == "False") return 0;
  }
  if (label.is_number_integer() && (label.get<int>() == 0 || label.get<int>() == 1)) {
    return label.get<int>();
  }
  throw InputError(row.where, "label must be \"true\"/\"false\", true/false or 0/1");
}

std::vector<Doc> load_boolq(const std::filesystem::path& root) {
  const auto file = locate(root, kFiles);
  std::vector<Doc> docs;
  for (const auto& row : read_jsonl(file.path)) {
    const std::string context = string_field(row, "passage") + "\nQuestion: " +
                                string_field(row, "question") + "?\nAnswer:";
    docs.push_back(multiple_choice_doc(static_cast<int64_t>(docs.size()), context, {"no", "yes"},
                                       boolq_gold(row), row.where));
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
