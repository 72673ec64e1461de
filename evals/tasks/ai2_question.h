// AI2's multiple-choice question layout, shared by ARC (Easy, Challenge) and OpenBookQA, in both of
// the layouts found on disk:
//   official release: {"id", "question": {"stem", "choices": [{"text", "label"}, ...]}, "answerKey"}
//   hub export:       {"id", <stem field>: "...", "choices": {"text": [...], "label": [...]}, "answerKey"}
// (the hub's stem field is "question" for allenai/ai2_arc and "question_stem" for
// allenai/openbookqa). The layout is read from the row: an object under "question" is official.
#pragma once
#include <string>
#include <vector>

#include "evals/tasks/task_data.h"

namespace attnbench::evals {

struct Ai2Question {
  std::string stem;
  std::vector<std::string> texts;   // choices.text
  std::vector<std::string> labels;  // choices.label: "A".."E" or "1".."5"
  std::string answer_key;
};

Ai2Question read_ai2_question(const JsonRow& row, const char* hub_stem_field);

// choices.label.index(key) as lm-eval's doc_to_target computes it; InputError when absent.
int ai2_gold(const JsonRow& row, const Ai2Question& q, const std::string& key);

// The ARC tasks (arc/arc_easy.yaml, arc_challenge includes it): test split,
// context "Question: {{question}}\nAnswer:", choices choices.text, gold label.index(answerKey).
std::vector<Doc> load_arc(const std::filesystem::path& data_root, const TaskFiles& files);

// The files of one ARC set: "Easy" or "Challenge" (folder arc_easy / arc_challenge).
TaskFiles arc_files(const std::string& set);

// The task of one ARC set, as arc_easy.yaml declares it (arc_challenge.yaml includes it and
// changes the set): allenai/ai2_arc ARC-<set>, test split, acc and acc_norm.
TaskSpec arc_task(const std::string& set, const std::string& description);

}  // namespace attnbench::evals
