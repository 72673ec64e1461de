#include "harness/sweep/parallel.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "core/common/process.h"
#include "core/common/stop_signal.h"

namespace attnbench::sweep {
namespace {

namespace fs = std::filesystem;

struct Child {
  const Cell* cell = nullptr;
  fs::path log;
};

ChildCommand child_command(const SweepOptions& o, const fs::path& db, const Cell& cell, int threads,
                           const fs::path& log) {
  ChildCommand c;
  c.args = {o.executable.string(), "sweep", o.file.string(), "--only", cell.id,
            "--db", db.string(), "--runs-dir", o.runs_dir.string()};
  if (!o.data_dir.empty()) c.args.insert(c.args.end(), {"--data-dir", o.data_dir});
  if (o.retry_failed) c.args.push_back("--retry-failed");
  for (auto& kv : o.sets) c.args.insert(c.args.end(), {"--set", kv});
  if (o.limit) c.args.insert(c.args.end(), {"--limit", std::to_string(*o.limit)});
  c.env = environment_without({"OMP_NUM_THREADS"});
  c.env.push_back("OMP_NUM_THREADS=" + std::to_string(threads));
  c.log = log;
  return c;
}

// The last lines of a child's log, for a failure message.
std::string tail(const fs::path& log, size_t lines) {
  std::ifstream in(log);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) {
    out += "    " + all[i] + "\n";
  }
  return out;
}

// Where every running child is, one line each under a summary of the sweep's cells.
void print_status(const std::map<pid_t, Child>& running, size_t started, size_t finished,
                  size_t total) {
  fmt::print("status: {} running, {} finished, {} waiting of {} cell(s)\n", running.size(), finished,
             total - started, total);
  for (const auto& [pid, child] : running) {
    const std::string line = last_log_line(child.log);
    fmt::print("  {} {}: {}\n", child.cell->id, child.cell->label, line.empty() ? "starting" : line);
  }
  std::fflush(stdout);
}

}  // namespace

std::string last_log_line(const fs::path& log) {
  std::ifstream in(log, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff size = in.tellg();
  const std::streamoff from = std::max<std::streamoff>(0, size - 4096);  // a line fits in 4 KiB
  std::string text(static_cast<size_t>(size - from), '\0');
  in.seekg(from);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  const size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  const size_t newline = text.find_last_of("\r\n", end);
  const size_t start = newline == std::string::npos ? 0 : newline + 1;
  return text.substr(start, end - start + 1);
}

int threads_per_job(int jobs) {
  int total = 0;
  if (const char* env = std::getenv("OMP_NUM_THREADS")) total = std::atoi(env);
  if (total <= 0) total = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, total / std::max(1, jobs));
}

void run_children(const SweepOptions& o, const fs::path& db, const std::vector<const Cell*>& cells) {
  const int threads = threads_per_job(o.jobs);
  const fs::path logs = o.runs_dir / "logs";
  fs::create_directories(logs);
  fmt::print("running {} cell(s), {} at a time, {} thread(s) each; logs in {}/\n", cells.size(),
             o.jobs, threads, logs.string());
  std::fflush(stdout);

  std::map<pid_t, Child> running;
  size_t next = 0, started = 0, finished = 0;
  bool forwarded = false;
  using Clock = std::chrono::steady_clock;
  const auto every = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.status_every));
  Clock::time_point next_status = Clock::now() + every;
  while (true) {
    while (!stop_requested() && next < cells.size() && running.size() < static_cast<size_t>(o.jobs)) {
      const Cell& cell = *cells[next++];
      Child child{&cell, logs / (cell.id + ".log")};
      pid_t pid = spawn(child_command(o, db, cell, threads, child.log));
      running[pid] = child;
      fmt::print("[{}/{}] {} {}: started\n", ++started, cells.size(), cell.id, cell.label);
      std::fflush(stdout);
    }
    if (running.empty()) break;
    if (stop_requested() && !forwarded) {
      fmt::print("stopping: each running cell writes its checkpoint (Ctrl-C again to kill)\n");
      std::fflush(stdout);
      for (auto& [pid, c] : running) ::kill(pid, SIGINT);
      forwarded = true;
    }
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid == 0 || (pid < 0 && errno == EINTR)) {
      if (Clock::now() >= next_status) {
        print_status(running, started, finished, cells.size());
        next_status = Clock::now() + every;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (pid < 0) throw std::runtime_error(std::string("waitpid failed: ") + std::strerror(errno));
    auto it = running.find(pid);
    if (it == running.end()) continue;
    const Child child = it->second;
    running.erase(it);
    ++finished;
    const int code = exit_code(status);
    if (code == 0) {
      fmt::print("{} {}: done\n", child.cell->id, child.cell->label);
    } else if (code == 130) {
      fmt::print("{} {}: interrupted\n", child.cell->id, child.cell->label);
    } else {
      fmt::print("{} {}: exit code {}; the end of {}:\n{}", child.cell->id, child.cell->label, code,
                 child.log.string(), tail(child.log, 8));
    }
    std::fflush(stdout);
  }
}

}  // namespace attnbench::sweep
