// Runs a sweep's file no longer lists (harness/sweep/prune.h).
#include "harness/sweep/prune.h"

#include <cstdio>
#include <set>

#include <fmt/format.h>

#include "core/common/error.h"
#include "results/runs.h"
#include "results/sqlite.h"
#include "results/store.h"

namespace attnbench::sweep {

namespace fs = std::filesystem;

namespace {

// The sweep's trained members (runs of [[pretrained]] entries, labelled "pretrained=...", are never
// stale: their ids come from their weights) and those of them the expansion lacks, read once.
struct Membership {
  std::vector<StaleRun> stale;
  size_t trained = 0;
};

Membership membership(const SweepFile& sweep, const Expansion& e, const fs::path& db) {
  std::optional<results::Store> store = results::Store::open_if_results(db);
  if (!store) return {};
  {
    results::Stmt s = store->db().prepare("SELECT 1 FROM sweeps WHERE name = ?");
    s.bind(1, sweep.name);
    if (!s.step()) return {};
  }
  std::set<std::string> cells;
  for (const Cell& c : e.cells) cells.insert(c.id);
  Membership out;
  for (const results::SweepMember& m : results::sweep_members(store->db(), sweep.name)) {
    if (m.cell.rfind("pretrained=", 0) == 0) continue;
    ++out.trained;
    if (!cells.count(m.id)) out.stale.push_back({m.id, m.cell, m.status});
  }
  return out;
}

}  // namespace

std::vector<StaleRun> stale_runs(const SweepFile& sweep, const Expansion& e, const fs::path& db) {
  return membership(sweep, e, db).stale;
}

void note_stale_runs(const SweepFile& sweep, const std::vector<StaleRun>& stale) {
  if (stale.empty()) return;
  std::fflush(stdout);
  fmt::print(stderr,
             "note: {} run(s) of sweep {} are no longer cells of {} (an edited sweep) and stay in its "
             "tables and report; `attnbench sweep {} --prune` takes them out of the sweep (their "
             "rows stay in the database)\n",
             stale.size(), sweep.name, sweep.file.string(), sweep.file.string());
}

int prune_sweep(const SweepFile& sweep, const Expansion& e, const fs::path& db) {
  const Membership members = membership(sweep, e, db);
  const std::vector<StaleRun>& stale = members.stale;
  // Every member stale is what a sweep run with --set options (which enter the run ids) looks
  // like when pruned without them: refused rather than emptying the sweep.
  if (!stale.empty() && stale.size() == members.trained) {
    throw UsageError(fmt::format(
        "--prune: none of the {} trained runs of sweep {} is a cell of {}: were they made with --set "
        "options (which change the run ids)? Pass the same ones; to start a sweep afresh, rename it",
        stale.size(), sweep.name, sweep.file.string()));
  }
  if (stale.empty()) {
    fmt::print("sweep {}: every run in {} is a cell of {}; nothing to prune\n", sweep.name, db.string(),
               sweep.file.string());
    return 0;
  }
  std::vector<std::string> ids;
  for (const StaleRun& r : stale) {
    ids.push_back(r.id);
    fmt::print("taken out of sweep {}: {}  {:<11}  {}\n", sweep.name, r.id, r.status, r.cell);
  }
  results::Store::open(db).remove_from_sweep(sweep.name, ids);
  fmt::print("sweep {}: {} run(s) taken out; their rows stay in {} (attnbench results show RUN)\n",
             sweep.name, ids.size(), db.string());
  return 0;
}

}  // namespace attnbench::sweep
