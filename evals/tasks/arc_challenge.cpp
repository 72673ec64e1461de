// arc_challenge (lm_eval/tasks/arc/arc_challenge.yaml, `include: arc_easy.yaml`): allenai/ai2_arc
// ARC-Challenge, test split, 1172 questions; the same template as arc_easy.
#include "evals/tasks/ai2_question.h"

namespace attnbench::evals {
namespace {
TaskSpec arc_challenge_task() {
  TaskSpec t;
  t.name = "arc_challenge";
  t.description = "ARC-Challenge grade-school science questions (test, 1172)";
  t.source.folder = arc_files("Challenge").folder;
  t.source.dataset = "allenai/ai2_arc";
  t.source.config = "ARC-Challenge";
  t.source.split = "test";
  t.type = OutputType::MultipleChoice;
  t.metrics = {"acc", "acc_norm"};
  t.paper_metric = "acc_norm";
  t.load = [](const std::filesystem::path& root) { return load_arc(root, arc_files("Challenge")); };
  return t;
}

const RegisterTask kArcChallenge(arc_challenge_task());
}  // namespace
}  // namespace attnbench::evals
