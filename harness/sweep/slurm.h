// Slurm array emission (docs/sweeps.md, "Slurm"): one cell per array task, each writing its own
// SQLite file (SQLite must never be shared over a network file system), merged afterwards.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "harness/sweep/expand.h"
#include "harness/sweep/runner.h"

namespace attnbench::sweep {

// <folder of db>/<stem of db>.cell-<run id>.db: the database one array task writes.
std::filesystem::path cell_db_path(const std::filesystem::path& db, const std::string& run_id);

// The command that merges the array's databases into `db` (printed, and in the script's comments).
std::string merge_command(const std::filesystem::path& executable, const std::filesystem::path& db);

// Writes the sbatch script for `cells` to options.slurm (absolute paths throughout, so the job runs
// from any folder). With more than one rank per cell (options.gpus_per_cell x nodes_per_cell) each
// array task asks for N nodes x G tasks and G GPUs per node, exports MASTER_ADDR and MASTER_PORT,
// and its sweep starts the cell's ranks as an srun job step; otherwise a task is one process.
void write_slurm_script(const SweepFile& sweep, const std::vector<const Cell*>& cells,
                        const SweepOptions& options, const std::filesystem::path& db);

}  // namespace attnbench::sweep
