#include "evals/tasks/ai2_question.h"

namespace attnbench::evals {

Ai2Question read_ai2_question(const JsonRow& row, const char* hub_stem_field) {
  Ai2Question q;
  q.answer_key = string_field(row, "answerKey");
  const auto& question = field(row, has_field(row, "question") ? "question" : hub_stem_field);
  if (question.is_object()) {  // official release layout
    auto stem = question.find("stem");
    auto choices = question.find("choices");
    if (stem == question.end() || !stem->is_string() || choices == question.end() ||
        !choices->is_array()) {
      throw InputError(row.where, "expected \"question\": {\"stem\": string, \"choices\": [...]}");
    }
    q.stem = stem->get<std::string>();
    for (const auto& c : *choices) {
      if (!c.is_object() || !c.contains("text") || !c.contains("label") || !c["text"].is_string() ||
          !c["label"].is_string()) {
        throw InputError(row.where, "expected each choice as {\"text\": string, \"label\": string}");
      }
      q.texts.push_back(c["text"].get<std::string>());
      q.labels.push_back(c["label"].get<std::string>());
    }
    return q;
  }
  // Hub layout.
  q.stem = string_field(row, hub_stem_field);
  const auto& choices = field(row, "choices");
  if (!choices.is_object() || !choices.contains("text") || !choices.contains("label")) {
    throw InputError(row.where, "expected \"choices\": {\"text\": [...], \"label\": [...]}");
  }
  q.texts = string_list(row, choices["text"], "choices.text");
  q.labels = string_list(row, choices["label"], "choices.label");
  if (q.texts.size() != q.labels.size()) {
    throw InputError(row.where, "choices.text and choices.label differ in length");
  }
  return q;
}

int ai2_gold(const JsonRow& row, const Ai2Question& q, const std::string& key) {
  for (size_t i = 0; i < q.labels.size(); ++i) {
    if (q.labels[i] == key) return static_cast<int>(i);
  }
  throw InputError(row.where, "answerKey '" + key + "' is not one of the choice labels");
}

TaskFiles arc_files(const std::string& set) {
  TaskFiles f;
  f.folder = set == "Easy" ? "arc_easy" : "arc_challenge";
  f.official = "ARC-" + set + "-Test.jsonl";
  f.official_layout =
      "AI2 ARC-V1-Feb2018 JSONL: {\"id\", \"question\": {\"stem\", \"choices\": [{\"text\", "
      "\"label\"}]}, \"answerKey\"}";
  f.hub = {"hf_format/test.jsonl", "hf_format/ARC-" + set + "-test.jsonl"};
  f.hub_layout =
      "allenai/ai2_arc JSONL: {\"id\", \"question\", \"choices\": {\"text\", \"label\"}, "
      "\"answerKey\"}";
  return f;
}

TaskSpec arc_task(const std::string& set, const std::string& description) {
  TaskSpec t;
  t.name = arc_files(set).folder;  // arc_easy, arc_challenge: lm-eval's task names
  t.description = description;
  t.source.folder = arc_files(set).folder;
  t.source.dataset = "allenai/ai2_arc";
  t.source.config = "ARC-" + set;
  t.source.split = "test";
  t.type = OutputType::MultipleChoice;
  t.metrics = {"acc", "acc_norm"};
  t.paper_metric = "acc_norm";
  t.load = [set](const std::filesystem::path& root) { return load_arc(root, arc_files(set)); };
  return t;
}

std::vector<Doc> load_arc(const std::filesystem::path& data_root, const TaskFiles& files) {
  std::vector<Doc> docs;
  for (const auto& row : read_rows(data_root, files)) {
    const auto q = read_ai2_question(row, "question");
    const int gold = ai2_gold(row, q, q.answer_key);
    docs.push_back(multiple_choice_doc(static_cast<int64_t>(docs.size()),
                                       "Question: " + q.stem + "\nAnswer:", q.texts, gold, row.where));
  }
  return docs;
}

}  // namespace attnbench::evals
