// arc_easy (lm_eval/tasks/arc/arc_easy.yaml): allenai/ai2_arc ARC-Easy, test split, 2376 questions.
#include "evals/tasks/ai2_question.h"

namespace attnbench::evals {
namespace {
const RegisterTask kArcEasy({
    "arc_easy",
    "ARC-Easy grade-school science questions (test, 2376)",
    OutputType::MultipleChoice,
    {"acc", "acc_norm"},
    "acc_norm",
    [](const std::filesystem::path& root) { return load_arc(root, arc_files("Easy")); },
    {},  // data_note: exact prompts from either layout
});
}  // namespace
}  // namespace attnbench::evals
