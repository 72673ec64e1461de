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

// Runs `cell` of `sweep`. Runtime failures are recorded as status failed (with the message) and
// reported as Failed; configuration and data errors (UsageError) are recorded too and rethrown. A
// failed multi-rank training job is JobFailed: the cell stays resumable (cell_launch.h).
CellOutcome run_cell(const SweepFile& sweep, const Cell& cell, results::Store& store,
                     const CellRunOptions& options);

// The cell as the store records a run it has not started: id, label, config and its params.
results::PendingRun pending_run(const Cell& cell);

// The cell's tasks (config.eval.tasks) that its run has no eval row for at its limit.
std::vector<std::string> missing_tasks(const Cell& cell, results::Store& store);

}  // namespace attnbench::sweep
