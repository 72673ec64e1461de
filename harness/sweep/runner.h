// `attnbench sweep`: expands a sweep file, then runs its cells locally (one after another, or
// --jobs N child processes), prints them (--dry-run), or writes a Slurm array script (--slurm).
// Re-running a sweep skips finished cells, resumes interrupted ones from their checkpoint, leaves
// failed ones alone unless --retry-failed, and records diverged ones as such (docs/sweeps.md,
// "Running: resume and skip").
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "results/store.h"

namespace attnbench::sweep {

struct SweepOptions {
  std::filesystem::path file;
  bool dry_run = false;
  bool prune = false;  // take the runs the file no longer lists out of the sweep, run nothing
  int jobs = 1;                  // cells run in parallel, each in its own child process
  double status_every = 30;      // --jobs: seconds between the lines saying where each cell is
  std::string db;                // --db; "" = results::default_db_path
  std::string only;              // run just this cell (run id, id prefix or label)
  bool retry_failed = false;
  std::string slurm;             // write an sbatch array script here instead of running
  std::filesystem::path runs_dir = "runs";  // run folders <runs_dir>/<run id>/
  std::string data_dir;          // --data-dir (tasks, tokenizer); "" = $ATTNBENCH_DATA or ./data
  bool quiet = false;            // no training progress lines
  std::vector<std::string> sets; // --set KEY=VALUE applied to every cell (changes run ids)
  std::optional<int64_t> limit;  // --limit: replaces the sweep's limit (evaluation only)
  results::RunMetadata metadata; // recorded with every run this process claims
  std::filesystem::path executable;  // attnbench itself: children of --jobs and the Slurm script
  // Ranks of each cell's data-parallel training (docs/sweeps.md, "Multi-GPU and multi-node
  // cells"): more than one makes training a job of its own (harness/sweep/cell_launch.h).
  int gpus_per_cell = 1;         // ranks per node, one GPU each on CUDA
  int nodes_per_cell = 1;        // > 1 only inside a Slurm allocation (srun) or with --slurm
  int dist_timeout = 300;        // seconds a rank waits for a hung peer (train --dist-timeout)
  bool oversubscribe = false;    // more local CPU ranks than cores (train --oversubscribe)
};

// Returns the exit code (docs/sweeps.md, "Exit codes"), read from the store at the end, after
// waiting for the cells other live processes held: 0 when every cell of the call is finished on
// every task the sweep lists, or diverged; 1 when one is not (failed now or before, left
// interrupted without a Ctrl-C here, held by a process that is gone or silent, or still held under
// --only, never started), naming those cells on stderr; 130 when this process was interrupted. Bad input
// throws UsageError before any work.
int run_sweep(const SweepOptions& options);

}  // namespace attnbench::sweep
