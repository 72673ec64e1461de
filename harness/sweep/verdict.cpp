#include "harness/sweep/verdict.h"

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "core/common/stop_signal.h"
#include "core/common/error.h"
#include "results/query.h"
#include "results/runs.h"
#include "results/table.h"

namespace attnbench::sweep {
namespace {

using results::RunStatus;

// The sweep's table once it is done: the store's paper-style renderer, else the list of runs.
void print_results(results::Store& store, const std::string& sweep) {
  try {
    results::TableRequest request;
    request.sweep = sweep;
    results::ResultTable table = results::build_table(store.db(), request);
    if (!table.columns.empty()) {
      std::cout << "\n" << results::render_table(table, "md");
      return;
    }
  } catch (const std::exception&) {
    // No evals yet (e.g. a sweep without tasks): the run list below says what there is.
  }
  results::RunFilter filter;
  filter.sweep = sweep;
  std::cout << "\n" << results::render_grid(results::runs_grid(store, filter), "table");
}

// Status counts of the sweep's cells in the store, e.g. "finished 10, running 2, not started 3".
std::string status_summary(results::Store& store, const std::vector<const Cell*>& cells) {
  std::map<std::string, int> counts;
  for (const Cell* c : cells) {
    auto run = store.run(c->id);
    ++counts[run ? results::to_string(run->status) : "not started"];
  }
  std::vector<std::string> parts;
  for (auto& [s, n] : counts) parts.push_back(fmt::format("{} {}", s, n));
  return join(parts, ", ");
}

// A cell this call was to run that did not end finished or diverged, and why.
struct Unfinished {
  const Cell* cell;
  std::string why;
};

// Whether a running claim belongs to another process that is still at work: it has refreshed its
// heartbeat within three beats and, on this host, its pid exists. A holder that fails this is
// gone or hung; the claim lets a later run take it over once it is stale (results/store.h).
bool live_holder(const results::RunInfo& run, const std::string& self) {
  if (run.owner == self) return false;  // this process ended without settling the cell
  const double now = std::chrono::duration<double>(
                         std::chrono::system_clock::now().time_since_epoch()).count();
  if (now - run.heartbeat > 3 * kHeartbeatIntervalS) return false;
  const size_t colon = run.owner.rfind(':');
  const std::string host = run.owner.substr(0, colon);
  if (host != self.substr(0, self.rfind(':'))) return true;
  const pid_t pid = static_cast<pid_t>(std::atoll(run.owner.c_str() + colon + 1));
  return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM);
}

// The cells that did not end finished or diverged, or finished without a task this sweep lists,
// from the store, so that cells run by children of --jobs or by another runner count as much as
// cells run here.
std::vector<Unfinished> verdict(results::Store& store, const std::vector<const Cell*>& cells,
                                bool retry_failed) {
  std::vector<Unfinished> out;
  for (const Cell* c : cells) {
    const std::optional<results::RunInfo> run = store.run(c->id);
    const std::string error =  // its first line: the summary stays one line per cell
        run && !run->error.empty() ? ": " + run->error.substr(0, run->error.find('\n')) : "";
    switch (run ? run->status : RunStatus::Pending) {
      case RunStatus::Finished:
        if (const auto missing = missing_tasks(*c, store); !missing.empty()) {
          out.push_back({c, "finished, but not scored on " + join(missing) +
                                " (the same command scores them)"});
        }
        break;
      case RunStatus::Diverged:
        break;
      case RunStatus::Running:
        if (live_holder(*run, store.owner())) {  // after a Ctrl-C, or under --only
          out.push_back({c, "still running in " + run->owner + ": not finished when this call "
                            "ended (the same command waits for it)"});
        } else {
          out.push_back({c, "marked running by " + run->owner + ", which is gone or silent; a "
                            "later run takes it over"});
        }
        break;
      case RunStatus::Failed:
        out.push_back({c, "failed" + error + (retry_failed ? "" : " (--retry-failed runs it again)")});
        break;
      case RunStatus::Interrupted:
        out.push_back({c, "interrupted" + error + " (the same command resumes it)"});
        break;
      case RunStatus::Pending:
        out.push_back({c, "not started"});
        break;
    }
  }
  return out;
}

// One line naming every cell that did not finish, then why each did not, on stderr.
void print_unfinished(const std::string& sweep, const std::vector<Unfinished>& unfinished) {
  if (unfinished.empty()) return;
  std::vector<std::string> names;
  for (const Unfinished& u : unfinished) names.push_back(u.cell->id + " (" + u.cell->label + ")");
  std::fflush(stdout);
  fmt::print(stderr, "sweep {}: {} cell(s) did not finish: {}\n", sweep, unfinished.size(),
             join(names));
  for (const Unfinished& u : unfinished) {
    fmt::print(stderr, "  {} {}: {}\n", u.cell->id, u.cell->label, u.why);
  }
}

}  // namespace

void finish_shared_cells(const SweepFile& sweep, const std::vector<const Cell*>& cells,
                         results::Store& store, const CellRunOptions& co) {
  const auto held_elsewhere = [&] {
    std::vector<const Cell*> out;
    for (const Cell* c : cells) {
      const auto run = store.run(c->id);
      if (run && run->status == RunStatus::Running && live_holder(*run, store.owner())) out.push_back(c);
    }
    return out;
  };
  const std::vector<const Cell*> waited = held_elsewhere();
  if (waited.empty()) return;
  std::vector<std::string> ids;
  for (const Cell* c : waited) ids.push_back(c->id);
  fmt::print("waiting for {} cell(s) running in other processes: {}\n", waited.size(), join(ids));
  std::fflush(stdout);
  for (auto held = waited; !held.empty() && !stop_requested(); held = held_elsewhere()) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  for (const Cell* c : waited) {
    if (stop_requested()) break;
    run_cell(sweep, *c, store, co);
  }
}

int sweep_verdict(const SweepFile& sweep, const std::vector<const Cell*>& cells,
                  results::Store& store, const SweepOptions& o,
                  const std::vector<std::string>& pretrained_unfinished) {
  if (o.only.empty()) fmt::print("\nsweep {}: {}\n", sweep.name, status_summary(store, cells));
  const std::vector<Unfinished> unfinished = verdict(store, cells, o.retry_failed);
  print_unfinished(sweep.name, unfinished);
  if (!pretrained_unfinished.empty()) {
    std::fflush(stdout);
    fmt::print(stderr, "sweep {}: {} pretrained model(s) not scored: {}\n", sweep.name,
               pretrained_unfinished.size(), join(pretrained_unfinished));
  }
  if (stop_requested()) {
    fmt::print("interrupted: run the same command to resume\n");
    return 130;
  }
  // One cell, often a child of --jobs or a Slurm task: the runner or `results table` sums up.
  if (o.only.empty()) print_results(store, sweep.name);
  return unfinished.empty() && pretrained_unfinished.empty() ? 0 : 1;
}

}  // namespace attnbench::sweep
