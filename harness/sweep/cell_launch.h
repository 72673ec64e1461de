// Cells trained by more than one process (docs/sweeps.md, "Multi-GPU and multi-node cells"):
// with --gpus-per-cell G and --nodes-per-cell N, a cell's training is a data-parallel job of N x G
// ranks (docs/distributed.md) that the sweep starts and waits for: an srun job step inside a Slurm
// allocation, else G local ranks. The sweep process stays the only writer of the store: when the
// job ends it ingests the run folder's metrics.jsonl and reads its status.json, then evaluates the
// checkpoint itself, as for any cell.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/sweep/expand.h"
#include "train/trainer.h"
#include "results/store.h"

namespace attnbench::sweep {

struct CellLaunch {
  int gpus_per_cell = 1;            // ranks per node (one GPU each on CUDA)
  int nodes_per_cell = 1;
  int dist_timeout_s = 300;         // train --dist-timeout: how long a rank waits for a hung peer
  std::filesystem::path executable; // attnbench itself, run as `train` by every rank
  bool oversubscribe = false;       // local CPU ranks beyond the cores
  bool distributed() const { return gpus_per_cell * nodes_per_cell > 1; }
};

// How a cell's training went. `failure` is set when the job ended without a result to trust (a
// rank died, failed or hung): the cell is then left resumable, never marked failed.
struct TrainedCell {
  train::TrainResult result;
  std::string failure;
};

// True inside a Slurm allocation (SLURM_JOB_ID set): a cell's ranks are an srun job step there.
bool in_slurm_allocation();

// UsageError for G, N or the timeout below 1 (what --slurm and --dry-run need).
void check_rank_counts(const CellLaunch& launch);
// UsageError, before any work, for a launch that cannot run: check_rank_counts, N > 1 outside
// Slurm, srun missing inside it, --jobs with more than one rank per cell, more ranks than local
// GPUs, or a cell whose global batch does not split evenly over its ranks.
void check_cell_launch(const CellLaunch& launch, int jobs, const std::vector<const Cell*>& cells);

// `attnbench train` as every rank runs it; paths absolute (srun may start ranks anywhere).
std::vector<std::string> train_command(const CellLaunch& launch,
                                       const std::filesystem::path& config_json,
                                       const std::filesystem::path& run_dir);
// `srun --nodes=N --ntasks-per-node=G --kill-on-bad-exit=1 TRAIN...`, srun found on PATH.
std::vector<std::string> srun_command(const CellLaunch& launch, const std::vector<std::string>& train);

// Trains `cfg` in `run_dir` as a data-parallel job: writes run_dir/cell-config.json (the resolved
// config: the same run id), runs the job, upserts its metrics into the store under `run_id` and
// reads its status.json.
TrainedCell train_distributed(const config::RunConfig& cfg, const std::filesystem::path& run_dir,
                              results::Store& store, const std::string& run_id,
                              const CellLaunch& launch);

// Upserts every metric line of a metrics.jsonl (train/metric_sink.h) into the store, on
// the keys StoreSink uses; a last line cut short by a killed writer is skipped. Returns the rows.
size_t ingest_metrics(const std::filesystem::path& jsonl, results::Store& store,
                      const std::string& run_id);

// A run folder's status.json as a TrainResult (null losses as NaN); nullopt when there is none.
std::optional<train::TrainResult> read_status(const std::filesystem::path& run_dir);

}  // namespace attnbench::sweep
