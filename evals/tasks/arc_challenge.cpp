// arc_challenge (lm_eval/tasks/arc/arc_challenge.yaml, `include: arc_easy.yaml`): allenai/ai2_arc
// ARC-Challenge, test split, 1172 questions; the same template as arc_easy.
#include "evals/tasks/ai2_question.h"

namespace attnbench::evals {
namespace {
const RegisterTask kArcChallenge(arc_task(
    "Challenge", "ARC-Challenge grade-school science questions (test, 1172)"));
}  // namespace
}  // namespace attnbench::evals
