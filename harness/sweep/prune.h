// Runs a sweep's file no longer lists: an edited sweep leaves its old cells in the store, where
// they would stay in every table, chart and report of the sweep (docs/sweeps.md, "Editing a
// sweep"). The runner names them; `attnbench sweep FILE --prune` takes them out of the sweep.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "harness/sweep/expand.h"
#include "harness/sweep/sweep_file.h"

namespace attnbench::sweep {

struct StaleRun {
  std::string id;
  std::string cell;    // its label when it was a cell
  std::string status;
};

// The members of `sweep` in the database at `db` that are none of the expansion's cells. Runs of
// [[pretrained]] entries (cells labelled "pretrained=...") are never stale: their ids come from
// their weights, which this does not read. Empty when the database or the sweep does not exist.
std::vector<StaleRun> stale_runs(const SweepFile& sweep, const Expansion& e, const std::filesystem::path& db);

// One note on stderr when there are stale runs: how many, and the command that removes them.
void note_stale_runs(const SweepFile& sweep, const std::vector<StaleRun>& stale);

// --prune: takes the stale runs out of the sweep, printing each (their rows stay); returns 0.
int prune_sweep(const SweepFile& sweep, const Expansion& e, const std::filesystem::path& db);

}  // namespace attnbench::sweep
