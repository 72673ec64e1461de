#include "harness/sweep/cell_launch.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/common/paths.h"
#include "core/common/process.h"
#include "core/common/stop_signal.h"
#include "train/launch.h"
#include "model/checkpoint_dir.h"

namespace attnbench::sweep {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// How the training job ended: its exit code (0, 130 interrupted, else failed) and, in words, who
// ended how ("srun exited with status 1").
struct JobEnd {
  int code = 0;
  std::string how;
};

// The first line a shell command prints ("" when it fails).
std::string first_line_of(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  char buf[256] = {};
  if (!pipe || !std::fgets(buf, sizeof buf, pipe.get())) return "";
  std::string s(buf);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

// spawn() execs a path: srun is looked up on PATH here, as a shell would.
std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const fs::path candidate = fs::path(dirs.substr(start, end - start)) / name;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    start = end + 1;
  }
  return "";
}

// The job step's environment. The --slurm script exports MASTER_ADDR and MASTER_PORT; inside an
// allocation made by hand they are derived the same way: rank 0 runs on the allocation's first
// node, and the port comes from the job id (as in slurm.cpp) so that jobs sharing a node differ.
// torchrun's variables are dropped: a rank reads them before srun's (train/distributed.h).
std::vector<std::string> srun_environment() {
  std::vector<std::string> env =
      environment_without({"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"});
  if (!std::getenv("MASTER_ADDR")) {
    const std::string host =
        first_line_of("scontrol show hostnames \"$SLURM_JOB_NODELIST\" 2>/dev/null | head -n1");
    if (!host.empty()) env.push_back("MASTER_ADDR=" + host);  // else the ranks say it is missing
  }
  if (!std::getenv("MASTER_PORT")) {
    const long job = std::atol(std::getenv("SLURM_JOB_ID"));
    env.push_back("MASTER_PORT=" + std::to_string(10000 + job % 20000));
  }
  return env;
}

// Runs the job step and waits. srun runs in its own process group (spawn), so a terminal's Ctrl-C
// reaches only the sweep, which forwards the stop once as SIGTERM: srun passes SIGTERM on to every
// task (each rank then stops like on Ctrl-C and rank 0 checkpoints), while srun's own SIGINT only
// prints the tasks' state.
JobEnd run_srun(const CellLaunch& l, const std::vector<std::string>& train) {
  ChildCommand c;
  c.args = srun_command(l, train);
  c.env = srun_environment();
  const pid_t pid = spawn(c);
  bool forwarded = false;
  int status = 0;
  while (true) {
    if (stop_requested() && !forwarded) {
      ::kill(pid, SIGTERM);
      forwarded = true;
    }
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) {
      throw std::runtime_error(std::string("waiting for srun failed: ") + std::strerror(errno));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return {exit_code(status), "srun " + describe_exit(status)};
}

// G ranks on this machine. The launcher takes Ctrl-C and SIGTERM itself while they run (each rank
// checkpoints), so a stop it reports is recorded as the sweep's: no further cell starts.
JobEnd run_local(const CellLaunch& l, const std::vector<std::string>& train) {
  const int code = train::run_local_ranks(train, l.gpus_per_cell,
                                          std::chrono::seconds(l.dist_timeout_s));
  if (code == 130) request_stop(SIGINT);
  return {code, fmt::format("the launcher of {} local ranks exited with status {}",
                            l.gpus_per_cell, code)};
}

// What the job's end means for the cell. A diverged status.json is a result whatever the exit
// code (train exits 1 on divergence); without a finished one, a job stopped by the sweep's own
// interrupt is an interrupt, and anything else a failure of the job, not of the cell: the
// checkpoint is there to resume from.
TrainedCell judge(const std::optional<train::TrainResult>& status, const JobEnd& end) {
  TrainedCell t;
  if (status) t.result = *status;
  if (status && status->status == "diverged") return t;
  if (end.code == 0 && status && status->status == "finished") return t;
  t.result.status = "interrupted";
  if (stop_requested()) return t;
  t.failure = fmt::format(
      "training job failed: {}{} (a rank died, failed or timed out; its output is above); the "
      "checkpoint is kept and running the sweep again resumes the cell",
      end.how, end.code == 0 ? " without writing status.json" : "");
  return t;
}

// One line of metrics.jsonl: {"key":...,"step":...,"value":... or null,"time":...}.
results::Metric metric_of(const std::string& line, const fs::path& file, size_t line_no) {
  const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("key") || !j["key"].is_string() || !j.contains("step") ||
      !j["step"].is_number_integer()) {
    throw std::runtime_error(fmt::format("{}:{}: not a metric line (expected {{\"key\", \"step\", "
                                         "\"value\", \"time\"}}): {}",
                                         file.string(), line_no, line.substr(0, 200)));
  }
  results::Metric m;
  m.key = j["key"].get<std::string>();
  m.step = j["step"].get<int64_t>();
  // null is a non-finite value (JSON has no NaN); the store keeps it as NULL, as StoreSink does.
  const auto value = j.find("value");
  m.value = value != j.end() && value->is_number() ? value->get<double>()
                                                   : std::numeric_limits<double>::quiet_NaN();
  if (auto time = j.find("time"); time != j.end() && time->is_number()) m.time = time->get<double>();
  return m;
}

// Each cell's ranks must split its global batch evenly, and locally there must be a GPU per rank
// (srun's nodes have their own).
void check_cell_ranks(const Cell& c, const CellLaunch& l) {
  const int world = l.gpus_per_cell * l.nodes_per_cell;
  try {
    train::check_ranks(c.config, world, in_slurm_allocation() ? 0 : l.gpus_per_cell,
                       fmt::format("--gpus-per-cell {}", l.gpus_per_cell), l.oversubscribe);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("cell {} ({}), {} rank(s): {}", c.label, c.id, world, e.what()));
  }
}

}  // namespace

bool in_slurm_allocation() {
  const char* job = std::getenv("SLURM_JOB_ID");
  return job && *job;
}

void check_rank_counts(const CellLaunch& l) {
  if (l.gpus_per_cell < 1) throw UsageError("--gpus-per-cell must be at least 1 (ranks per node)");
  if (l.nodes_per_cell < 1) throw UsageError("--nodes-per-cell must be at least 1");
  if (l.dist_timeout_s < 1) throw UsageError("--dist-timeout must be at least 1 second");
}

void check_cell_launch(const CellLaunch& l, int jobs, const std::vector<const Cell*>& cells) {
  check_rank_counts(l);
  if (!l.distributed()) return;
  if (l.nodes_per_cell > 1 && !in_slurm_allocation()) {
    throw UsageError(fmt::format(
        "--nodes-per-cell {}: ranks on several nodes are started by srun, and this is not a Slurm "
        "allocation (SLURM_JOB_ID is not set); run the sweep inside salloc or sbatch, or write an "
        "array script with --slurm",
        l.nodes_per_cell));
  }
  if (jobs > 1) {
    throw UsageError(fmt::format(
        "--jobs {} cannot be combined with {} ranks per cell: every cell's ranks take GPUs 0..{} "
        "(cuda:LOCAL_RANK), so cells running side by side would share them; run the cells one at "
        "a time, or as a Slurm array (--slurm)",
        jobs, l.gpus_per_cell * l.nodes_per_cell, l.gpus_per_cell - 1));
  }
  if (in_slurm_allocation()) srun_command(l, {});  // throws when srun is not on PATH
  for (const Cell* c : cells) check_cell_ranks(*c, l);
}

std::vector<std::string> train_command(const CellLaunch& l, const fs::path& config_json,
                                       const fs::path& run_dir) {
  return {absolute_path(l.executable), "train", "--config", absolute_path(config_json), "--out",
          absolute_path(run_dir), "--quiet", "--dist-timeout", std::to_string(l.dist_timeout_s)};
}

std::vector<std::string> srun_command(const CellLaunch& l, const std::vector<std::string>& train) {
  const std::string srun = find_on_path("srun");
  if (srun.empty()) {
    throw UsageError("SLURM_JOB_ID is set, so a cell's ranks are started with srun, but srun is "
                     "not on PATH");
  }
  std::vector<std::string> args = {srun, fmt::format("--nodes={}", l.nodes_per_cell),
                                   fmt::format("--ntasks-per-node={}", l.gpus_per_cell),
                                   "--kill-on-bad-exit=1"};
  args.insert(args.end(), train.begin(), train.end());
  return args;
}

TrainedCell train_distributed(const config::RunConfig& cfg, const fs::path& run_dir,
                              results::Store& store, const std::string& run_id,
                              const CellLaunch& l) {
  fs::create_directories(run_dir);
  // The ranks read the cell's resolved config from a file (same run id, docs/sweeps.md); it is
  // written before the job starts, and apart from config.json, which rank 0 rewrites.
  const fs::path config = run_dir / "cell-config.json";
  model::write_file_atomic(config, config::to_json(cfg).dump(2) + "\n");
  // A status.json of an earlier attempt must not pass for this job's.
  fs::remove(run_dir / "status.json");
  const std::vector<std::string> train = train_command(l, config, run_dir);
  const JobEnd end = in_slurm_allocation() ? run_srun(l, train) : run_local(l, train);
  // Whatever the end, the steps logged are real: a resumed job logs the same values again.
  ingest_metrics(run_dir / "metrics.jsonl", store, run_id);
  return judge(read_status(run_dir), end);
}

size_t ingest_metrics(const fs::path& jsonl, results::Store& store, const std::string& run_id) {
  std::ifstream in(jsonl, std::ios::binary);
  if (!in) return 0;  // the job ended before logging anything
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<results::Metric> rows;
  size_t line_no = 0;
  // Only complete lines: a writer killed mid-line leaves a last line without its newline.
  for (size_t pos = 0, end; (end = text.find('\n', pos)) != std::string::npos; pos = end + 1) {
    ++line_no;
    if (end > pos) rows.push_back(metric_of(text.substr(pos, end - pos), jsonl, line_no));
  }
  if (!rows.empty()) store.log_metrics(run_id, rows);  // one transaction, upserts
  return rows.size();
}

std::optional<train::TrainResult> read_status(const fs::path& run_dir) {
  std::ifstream in(run_dir / "status.json");
  if (!in) return std::nullopt;
  const json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  // Written through a rename (docs/training.md), so anything else is not the trainer's.
  if (!j.is_object() || !j.contains("status") || !j["status"].is_string()) return std::nullopt;
  auto number = [&](const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>()
                                            : std::numeric_limits<double>::quiet_NaN();
  };
  train::TrainResult r;
  r.status = j["status"].get<std::string>();
  r.step = j.contains("step") && j["step"].is_number_integer() ? j["step"].get<int64_t>() : 0;
  r.train_loss = number("train_loss");
  r.val_loss = number("val_loss");
  return r;
}

}  // namespace attnbench::sweep
