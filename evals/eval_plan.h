// One evaluation plan (docs/evaluation.md, "What an evaluation scores"): `attnbench eval` and a
// sweep's cells build what they score here, from the run's [eval] section and the command line,
// and run it through run_evaluation. `eval` on a sweep's run therefore scores exactly what the
// sweep scored (its tasks at every length, its limit and per-task limits) unless a flag says
// otherwise, and the two store the same rows.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/config/run_config.h"
#include "evals/decoder_lm_adapter.h"
#include "evals/evaluator.h"
#include "evals/scored_model.h"

namespace attnbench::evals {

// The tasks of a run's [eval] as the store names them: each at the trained length (its own name),
// then at every eval.contexts length (task@N, length extrapolation), in that order.
std::vector<std::string> scored_task_names(const config::EvalConfig& eval, int64_t trained_length);

// What the command line changes (a sweep changes nothing).
struct EvalRequest {
  // Task names ("task@N": at N tokens); empty: the [eval]'s (scored_task_names), or the paper's
  // tasks when it names none (an imported model).
  std::vector<std::string> tasks;
  int64_t limit = -1;   // >= 0: this item limit for every task (0 = every item) instead of
                        // eval.limit and eval.task_limits
  int64_t context = 0;  // > 0: the length of every task named without "@N" (`eval --context`)
};

// The model at one length with the tasks scored at it.
struct EvalGroup {
  DecoderLMAdapter model;
  std::vector<LoadedTask> tasks;
};

// The scoring options of `scored` under [eval] `eval`: its batch size, and the model's own BOS
// policy and prefix token (an attnbench model's are its config's eval.bos; an imported model's
// its tokenizer's, docs/pretrained.md).
EvalOptions evaluation_options(const ScoredModel& scored, const config::EvalConfig& eval);

// The plan: every length checked (model::scoring_length) and every task's data read (once, however
// many lengths score it) before the first forward pass; UsageError naming the task or length
// otherwise. Groups in order of the lengths' first appearance, tasks in the order named.
std::vector<EvalGroup> plan_evaluation(const ScoredModel& scored, const config::EvalConfig& eval,
                                       const EvalRequest& request, const std::filesystem::path& data_root);

// Scores the plan one task at a time, handing each report to `done` (a caller stores it as one
// transaction, so a kill loses at most the task in progress). `stop` is polled between tasks;
// false when it stopped early.
bool run_evaluation(std::vector<EvalGroup>& plan, const TextEncoder& encode, const EvalOptions& options,
                    const TaskDone& done, const std::function<bool()>& stop = {});

}  // namespace attnbench::evals
