// winogrande (lm_eval/tasks/winogrande/default.yaml + preprocess_winogrande.py): winogrande_xl,
// validation split, 1267 sentences, scored by "partial evaluation" (docs/tasks.md, "winogrande"):
//   contexts     = [sentence[:idx("_")] + option1, sentence[:idx("_")] + option2]  (doc_to_choice)
//   continuation = " " + sentence[idx("_") + 1:].strip()  shared by both contexts    (doc_to_target)
//   gold         = {"1": 0, "2": 1}[answer]                                          (doc_to_text)
// Doc.choices holds the two contexts, as lm-eval's doc_to_choice returns them (only acc is reported).
// Official release: dev.jsonl {"qID","sentence","option1","option2","answer"} + dev-labels.lst (1/2);
// the labels file is the gold and must agree with "answer" where a row has it. Hub export
// (allenai/winogrande): rows {"sentence","option1","option2","answer"} without "qID"; a first row
// with "qID" is the official layout (docs/tasks.md), its labels put into "answer" by
// read_labelled_rows.
#include "evals/tasks/py_text.h"
#include "evals/tasks/task_data.h"

namespace attnbench::evals {
namespace {

TaskFiles winogrande_files() {
  TaskFiles f;
  f.folder = "winogrande";
  f.official = "dev.jsonl";
  f.official_layout =
      "official WinoGrande 1.1 JSONL {\"qID\", \"sentence\", \"option1\", \"option2\", \"answer\"} + "
      "dev-labels.lst";
  f.hub = {"hf_format/validation.jsonl"};
  f.hub_layout = "allenai/winogrande JSONL: {\"sentence\", \"option1\", \"option2\", \"answer\"}";
  return f;
}

const TaskFiles kFiles = winogrande_files();

const LabelsFile kLabels = {"dev-labels.lst", "one label per line, 1 = option1, 2 = option2", "answer",
                            "qID"};

std::vector<Doc> load_winogrande(const std::filesystem::path& root) {
  std::vector<Doc> docs;
  for (const JsonRow& row : read_labelled_rows(root, kFiles, kLabels)) {
    const std::string sentence = string_field(row, "sentence");
    const size_t blank = sentence.find('_');
    if (blank == std::string::npos) throw InputError(row.where, "sentence has no '_' blank");
    const int answer = int_field(row, "answer");
    if (answer != 1 && answer != 2) throw InputError(row.where, "answer must be 1 or 2");
    const std::string prefix = sentence.substr(0, blank);
    const std::string continuation = kTargetDelimiter + py_strip(sentence.substr(blank + 1));
    Doc doc;
    doc.index = static_cast<int64_t>(docs.size());
    doc.gold = answer - 1;
    doc.choices = {prefix + string_field(row, "option1"), prefix + string_field(row, "option2")};
    for (const auto& context : doc.choices) doc.requests.push_back({context, continuation});
    docs.push_back(std::move(doc));
  }
  return docs;
}

TaskSpec winogrande_task() {
  TaskSpec t;
  t.name = "winogrande";
  t.description = "WinoGrande xl pronoun resolution (validation, 1267)";
  t.source.folder = kFiles.folder;
  t.source.dataset = "allenai/winogrande";
  t.source.config = "winogrande_xl";
  t.source.split = "validation";
  t.type = OutputType::MultipleChoice;
  t.metrics = {"acc"};
  t.paper_metric = "acc";
  t.load = load_winogrande;
  return t;
}

const RegisterTask kWinogrande(winogrande_task());

}  // namespace
}  // namespace attnbench::evals
