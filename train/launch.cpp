#include "train/launch.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "core/common/error.h"
#include "core/common/process.h"
#include "core/common/stop_signal.h"
#include "train/distributed.h"
#include "train/preflight.h"
#include "train/windows.h"
#include "model/device.h"

namespace attnbench::train {
namespace {

namespace chrono = std::chrono;

// The variables a rank reads to find its place (distributed.h); inherited values are replaced.
const std::vector<std::string> kRankVariables = {
    "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
    "TORCHELASTIC_USE_AGENT_STORE", "SLURM_PROCID", "SLURM_STEP_NUM_TASKS"};

ChildCommand rank_command(const std::vector<std::string>& args, int rank, int nproc, int port) {
  ChildCommand c;
  c.args = args;
  c.env = environment_without(kRankVariables);
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, std::string>>{{"RANK", std::to_string(rank)},
                                                        {"WORLD_SIZE", std::to_string(nproc)},
                                                        {"LOCAL_RANK", std::to_string(rank)},
                                                        {"LOCAL_WORLD_SIZE", std::to_string(nproc)},
                                                        {"MASTER_ADDR", "127.0.0.1"},
                                                        {"MASTER_PORT", std::to_string(port)},
                                                        {"TORCHELASTIC_USE_AGENT_STORE", "True"}}) {
    c.env.push_back(name + "=" + value);
  }
  return c;
}

// The ranks still running, by pid.
struct Ranks {
  std::map<pid_t, int> running;  // pid -> rank
  std::string failures;          // "rank 1 (pid 42) was killed by signal 9 (SIGKILL)", ...
  bool all_clean = true;         // every rank exited 0 or 130 so far
  bool interrupted_exit = false;

  void signal_all(int sig) const {
    for (const auto& [pid, rank] : running) ::kill(pid, sig);
  }

  // Reaps ranks that have ended; false when none has.
  bool reap() {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return false;
    auto it = running.find(pid);
    if (it == running.end()) return true;
    const int code = exit_code(status);
    if (code == 130) interrupted_exit = true;
    if (code != 0 && code != 130) {
      all_clean = false;
      failures += fmt::format("{}rank {} (pid {}) {}", failures.empty() ? "" : "; ", it->second, pid,
                              describe_exit(status));
    }
    running.erase(it);
    return true;
  }

  // SIGTERM, then SIGKILL to whatever still runs after `grace`.
  void stop(chrono::seconds grace) {
    signal_all(SIGTERM);
    const auto deadline = chrono::steady_clock::now() + grace;
    while (!running.empty() && chrono::steady_clock::now() < deadline) {
      if (!reap()) std::this_thread::sleep_for(chrono::milliseconds(50));
    }
    signal_all(SIGKILL);
    while (!running.empty()) {
      if (!reap()) std::this_thread::sleep_for(chrono::milliseconds(10));
    }
  }
};

}  // namespace

void check_ranks(const config::RunConfig& cfg, int world, int local, const std::string& option,
                 bool oversubscribe) {
  rank_micro_batches(cfg.train.batch_size, accumulation_steps(cfg.train, cfg.model), 0, world);
  if (local == 0) return;
  if (!model::resolve_device(cfg.train.device).is_cuda()) {
    // 1024 ranks forked on a 2-core machine only thrash: one rank per core, unless asked.
    const int cores = static_cast<int>(std::thread::hardware_concurrency());
    if (!oversubscribe && cores > 0 && local > cores) {
      throw UsageError(fmt::format("{}: {} CPU ranks on a machine with {} cores (one rank per "
                                   "core; --oversubscribe starts them anyway)",
                                   option, local, cores));
    }
    return;
  }
  const int gpus = static_cast<int>(torch::cuda::device_count());
  if (gpus < local) {
    throw UsageError(
        fmt::format("{}: one GPU per rank, and this machine has {}", option, gpus));
  }
}

int run_local_ranks(const std::vector<std::string>& args, int nproc, chrono::seconds timeout) {
  HostedStore store(nproc, timeout);
  // The ranks run in process groups of their own: Ctrl-C reaches the launcher alone. The first
  // asks every rank to checkpoint and stop; a second ends the launcher, and the ranks with it
  // (core/common/stop_signal.h).
  const StopSignals signals;
  Ranks ranks;
  for (int r = 0; r < nproc; ++r) ranks.running[spawn(rank_command(args, r, nproc, store.port()))] = r;
  bool forwarded = false;
  while (!ranks.running.empty() && ranks.all_clean) {
    if (stop_requested() && !forwarded) {
      ranks.signal_all(SIGINT);
      forwarded = true;
    }
    if (!ranks.reap()) std::this_thread::sleep_for(chrono::milliseconds(50));
  }
  if (!ranks.all_clean) {
    // Ranks that ended in the same moment are named together: the first reaped is not always the
    // cause.
    std::this_thread::sleep_for(chrono::milliseconds(200));
    while (ranks.reap()) {
    }
    fmt::print(stderr, "attnbench train: {}{}\n", ranks.failures,
               ranks.running.empty() ? "" : "; stopping the other ranks");
    ranks.stop(chrono::seconds(10));
  }
  if (!ranks.all_clean) return 1;
  return ranks.interrupted_exit || stop_requested() ? 130 : 0;
}

}  // namespace attnbench::train
