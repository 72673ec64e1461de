// attnbench sweep FILE [--dry-run] [--prune] [--jobs N] [--db PATH] [--only CELL] [--retry-failed]
//                      [--slurm OUT.sbatch] [--runs-dir DIR] [--data-dir D] [--quiet]
//                      [--gpus-per-cell G] [--nodes-per-cell N] [--dist-timeout SECONDS]
// Expands a sweep file into cells and runs them (docs/sweeps.md). Exit codes: 0 every cell finished
// or diverged, 1 a cell did not finish (failed, left interrupted, not started; named on stderr), 2
// bad sweep/config/data/options, 130 interrupted by Ctrl-C or SIGTERM (the same command resumes).
#include <torch/torch.h>

#include <array>
#include <limits>
#include <cstdio>
#include <memory>

#include "harness/cli/command.h"
#include "harness/cli/runtime.h"
#include "harness/sweep/runner.h"

namespace attnbench::cli::cmd_sweep {
namespace {

// Output of a shell command's first line ("" when it fails): for the git revision only.
std::string first_line_of(const char* command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command, "r"), ::pclose);
  if (!pipe) return "";
  std::array<char, 256> buf{};
  if (!std::fgets(buf.data(), buf.size(), pipe.get())) return "";
  std::string s(buf.data());
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

// The revision of the working tree the sweep is launched from, "-dirty" when it has changes:
// recorded with every run so that a result can be traced to its code.
std::string git_revision() {
  std::string rev = first_line_of("git rev-parse --short=12 HEAD 2>/dev/null");
  if (rev.empty()) return "";
  std::string dirty = first_line_of("git status --porcelain --untracked-files=no 2>/dev/null");
  return dirty.empty() ? rev : rev + "-dirty";
}

results::RunMetadata metadata() {
  results::RunMetadata m;
  m.git_revision = git_revision();
  m.threads = init_threads();
  m.blas = loaded_blas();
  m.device = torch::cuda::is_available() ? "cuda" : "cpu";
  m.attnbench_version = ATTNBENCH_VERSION;
  m.torch_version = TORCH_VERSION;
  return m;
}

RegisterCommand reg("sweep", "Run a sweep file: train, evaluate and store every cell", [](CLI::App& app) {
  auto o = std::make_shared<sweep::SweepOptions>();
  auto file = std::make_shared<std::string>();
  auto runs_dir = std::make_shared<std::string>("runs");
  app.add_option("FILE", *file, "Sweep file (TOML; docs/sweeps.md)")->required();
  app.add_flag("--dry-run", o->dry_run,
               "Print the expanded cells (run id, label) and what would run or be skipped");
  app.add_flag("--prune", o->prune,
               "Take the runs the file no longer lists (an edited sweep) out of the sweep, printing "
               "each; their rows stay in the database. Runs nothing");
  app.add_option("--jobs,-j", o->jobs,
                 "Cells run in parallel, each in its own process with threads / N threads")
      ->default_val(1)
      ->check(int_in(1, std::numeric_limits<int>::max()));
  app.add_option("--status-every", o->status_every,
                 "With --jobs: seconds between the lines saying where each running cell is (the "
                 "last line of its log)")
      ->default_val(30)
      ->check(finite_in(0.1, 86400.0));
  app.add_option("--db", o->db, "Results database (default $ATTNBENCH_DB, else runs/attnbench.db)");
  app.add_option("--only", o->only, "Run only this cell: run id, unique id prefix or label");
  app.add_flag("--retry-failed", o->retry_failed, "Run failed cells again");
  app.add_option("--slurm", o->slurm,
                 "Write an sbatch array script (one cell per task, one database each) and exit");
  app.add_option("--runs-dir", *runs_dir, "Run folders: DIR/<run id>/ (default runs)");
  app.add_option("--data-dir", o->data_dir,
                 "Data folder for tasks and the tokenizer (default $ATTNBENCH_DATA, else ./data)");
  app.add_flag("--quiet", o->quiet, "No training progress output");
  app.add_option("--set", o->sets, "Override a config key in every cell: section.key=value (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--gpus-per-cell", o->gpus_per_cell,
                 "Ranks per node of each cell's data-parallel training, one GPU each on CUDA: "
                 "local ranks, or an srun job step inside Slurm (docs/sweeps.md)")
      ->default_val(1)
      ->check(int_in(1, 1024));  // no node holds more; with the bound below, no product overflows
  app.add_option("--nodes-per-cell", o->nodes_per_cell,
                 "Nodes per cell: inside a Slurm allocation, or in the --slurm script")
      ->default_val(1)
      ->check(int_in(1, 65536));
  app.add_flag("--oversubscribe", o->oversubscribe,
               "Start more local CPU ranks per cell than this machine has cores");
  app.add_option("--dist-timeout", o->dist_timeout,
                 "Seconds a cell's rank waits for a hung peer before its job fails")
      ->default_val(300)
      ->check(int_in(1, 86400));
  app.add_option_function<int64_t>(
      "--limit", [o](const int64_t& n) { o->limit = n; },
      "Items per task, replacing the sweep's limit (per-task limits still apply)")
      ->check(int_in(1));
  // "" for --only would mean every cell, for --slurm a real run instead of a script.
  refuse_empty_values(app);
  return [o, file, runs_dir] {
    o->file = *file;
    o->runs_dir = *runs_dir;
    o->executable = std::filesystem::read_symlink("/proc/self/exe");
    if (!o->dry_run && o->slurm.empty()) o->metadata = metadata();
    return sweep::run_sweep(*o);
  };
});

}  // namespace
}  // namespace attnbench::cli::cmd_sweep
