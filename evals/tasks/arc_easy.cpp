// arc_easy (lm_eval/tasks/arc/arc_easy.yaml): allenai/ai2_arc ARC-Easy, test split, 2376 questions.
#include "evals/tasks/ai2_question.h"

namespace attnbench::evals {
namespace {
const RegisterTask kArcEasy(arc_task(
    "Easy", "ARC-Easy grade-school science questions (test, 2376)"));
}  // namespace
}  // namespace attnbench::evals
