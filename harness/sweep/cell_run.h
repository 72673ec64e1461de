// One sweep cell, start to end, in this process: claim it in the store (so that no two processes
// ever run one cell), train or resume from <runs-dir>/<run id>/, evaluate the sweep's tasks, record
// everything, set the final status (docs/sweeps.md, "Running: resume and skip"; docs/results.md).
#pragma once
#include <filesystem>
#include <string>

#include "harness/sweep/cell_launch.h"
#include "harness/sweep/expand.h"
#include "results/store.h"

namespace attnbench::sweep {

enum class CellOutcome {
  Finished,     // trained (or resumed) and evaluated in this call
  Evaluated,    // already finished; only tasks missing from the store were scored
  Skipped,      // finished with every task, or failed/diverged before (not retried)
  Held,         // another live process runs it
  Diverged,     // training stopped on a non-finite loss (recorded, never retried)
  Interrupted,  // Ctrl-C: checkpoint kept, status interrupted; the same command resumes it
  Failed,       // a runtime error, recorded with the run
  JobFailed,    // its multi-rank training job failed (a rank died or hung): recorded as interrupted
                // with the reason, so that the next run resumes it; the sweep still exits 1
  Busy,         // its run folder or the database was busy (transient_failure): recorded as
                // interrupted with the reason, resumable; the sweep still exits 1
};
const char* to_string(CellOutcome o);

struct CellRunOptions {
  std::filesystem::path runs_dir = "runs";
  std::filesystem::path data_root;  // tasks and the tokenizer
  bool retry_failed = false;
  bool quiet = false;               // no training progress (children of --jobs log to a file)
  results::RunMetadata metadata;
  CellLaunch launch;                // more than one rank per cell: training runs as a job
};

// A claim holder refreshes its heartbeat this often (and at every store write on the run).
constexpr int kHeartbeatIntervalS = 60;

// Runs `cell` of `sweep`. Runtime failures are recorded as status failed (with the message) and
// reported as Failed; configuration and data errors (UsageError) are recorded too and rethrown. A
// failed multi-rank training job is JobFailed and a transient failure is Busy: the cell stays
// resumable (status interrupted, the reason as its error).
CellOutcome run_cell(const SweepFile& sweep, const Cell& cell, results::Store& store,
                     const CellRunOptions& options);

// Whether `e`, thrown while a cell trained in `run_dir`, is a passing condition rather than a fault
// of the cell: another process holds the run folder (train/run_lock.h: it is training the
// same run) or the results database stayed locked past its busy timeout. Such a cell is left
// interrupted, which the next run resumes, instead of failed, which only --retry-failed runs again.
bool transient_failure(const std::exception& e, const std::filesystem::path& run_dir);

// The cell as the store records a run it has not started: id, label, config and its params.
results::PendingRun pending_run(const Cell& cell);

// The tasks of `eval` (its tasks at their limits, at the model's context `trained_length` and at
// each of eval.contexts, named as evals::task_at_length names them) that run `run_id` has no eval
// row for. A task stored with another item limit is not missing but a different measurement: a
// UsageError names both (a sweep's plan reads this before any work, so nothing is replaced).
std::vector<std::string> missing_tasks(const std::string& run_id, const config::EvalConfig& eval,
                                       int64_t trained_length, results::Store& store);
// The cell's tasks (config.eval.tasks, at its context and eval.contexts) that its run lacks.
std::vector<std::string> missing_tasks(const Cell& cell, results::Store& store);

// An eval-only cell ([[pretrained]], docs/sweeps.md "Pretrained models"): the Hugging Face folder
// loaded on the base config's train.device, stored under its own run id (its identity: family,
// name, weights, config.json) as a member of the sweep, scored on the tasks of the base config's
// [eval] that the store lacks for it, as `attnbench eval` scores it, and measured (sink mass,
// sparsity) on the text of the base config's validation shard, as the trained cells are. Outcomes
// as run_cell's (Finished, Evaluated, Skipped, Held, Interrupted, Failed); a folder that cannot be
// loaded throws.
CellOutcome run_pretrained(const SweepFile& sweep, const PretrainedEntry& entry,
                           const config::RunConfig& base, results::Store& store,
                           const CellRunOptions& options);

// What run_pretrained will need, checked before any cell trains (UsageError naming the entry): the
// folder's architecture (every config.json key) and tokenizer, and that the model reads every
// length of `eval`'s contexts (an imported model is scored within its max_position_embeddings).
// The weights are read only when the entry is scored.
void preflight_pretrained(const PretrainedEntry& entry, const config::EvalConfig& eval);

}  // namespace attnbench::sweep
