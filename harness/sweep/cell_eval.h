// The evaluation step of a sweep cell: its trained model scored zero-shot on the sweep's tasks by
// the evaluation driver and model adapter that `attnbench eval` runs (evals/evaluator.h,
// evals/decoder_lm_adapter.h; docs/evaluation.md), so that a cell's stored rows and samples are
// those `attnbench eval` stores for the same checkpoint.
#pragma once
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/config/run_config.h"
#include "evals/evaluator.h"
#include "evals/scored_model.h"

namespace attnbench::sweep {

struct CellEvalOptions {
  std::filesystem::path data_root;  // <root>/<task>/ (the tokenizer: the ScoredModel's)
  bool quiet = false;               // no progress bar
};

// Receives each scored task (its per-request samples included) as soon as it is done.
using RecordTask = std::function<void(const evals::LoadedTask& task, const evals::TaskReport& report)>;

// Scores `tasks` (scored task names: "wikitext", or "wikitext@1024" for 1024 tokens, length
// extrapolation; evals::task_at_length) on `scored` (its weights as they are, on their device, with its tokenizer, BOS
// policy and prefix token) with the options of the sweep's [eval] section `eval` (limits per task,
// batch size), one task at a time,
// handing each to `record` (the caller stores it as one transaction, so a kill loses at most the
// task in progress). Every task's data and the tokenizer are read before the first forward pass.
// `stop` is polled between tasks; returns false when it stopped early.
bool evaluate_checkpoint(const evals::ScoredModel& scored, const config::EvalConfig& eval,
                         const std::vector<std::string>& tasks, const CellEvalOptions& options,
                         const RecordTask& record, const std::function<bool()>& stop);

}  // namespace attnbench::sweep
