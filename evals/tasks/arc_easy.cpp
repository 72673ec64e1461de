// arc_easy (lm_eval/tasks/arc/arc_easy.yaml): allenai/ai2_arc ARC-Easy, test split, 2376 questions.
#include "evals/tasks/ai2_question.h"

namespace attnbench::evals {
namespace {
TaskSpec arc_easy_task() {
  TaskSpec t;
  t.name = "arc_easy";
  t.description = "ARC-Easy grade-school science questions (test, 2376)";
  t.source.folder = arc_files("Easy").folder;
  t.source.dataset = "allenai/ai2_arc";
  t.source.config = "ARC-Easy";
  t.source.split = "test";
  t.type = OutputType::MultipleChoice;
  t.metrics = {"acc", "acc_norm"};
  t.paper_metric = "acc_norm";
  t.load = [](const std::filesystem::path& root) { return load_arc(root, arc_files("Easy")); };
  return t;
}

const RegisterTask kArcEasy(arc_easy_task());
}  // namespace
}  // namespace attnbench::evals
