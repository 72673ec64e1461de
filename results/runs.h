// Views of runs in the store: `results runs`, `results show`, `results curves`, and a sweep's
// members in the order it created them. User input (sweep names, run ids, metric keys) reaches SQL
// only as bound parameters.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/grid.h"
#include "results/store.h"

namespace attnbench::results {

class Db;

// UsageError naming the sweeps in the database (with a did-you-mean) when `sweep` is not one.
void require_sweep(Db& db, const std::string& sweep);

// A member run of a sweep, in the order the sweep created them.
struct SweepMember {
  std::string id;
  std::string cell;
  std::string status;
};
// The sweep's runs; require_sweep first.
std::vector<SweepMember> sweep_members(Db& db, const std::string& sweep);
// Runs named one by one (full ids, resolve_run_id first), in the order given; the cell is the one
// the run was created with ("" for a standalone run).
std::vector<SweepMember> run_members(Db& db, const std::vector<std::string>& ids);

// `results runs`: one line per run.
Grid runs_grid(Store& store, const RunFilter& filter);

// The run whose id is `id` or starts with it (UsageError when none or several match).
std::string resolve_run_id(Db& db, const std::string& id);

// `results show`: config, metadata, params, final metrics (last step of each key), evals and the
// number of attention statistics and samples.
nlohmann::json show_run(Store& store, const std::string& id);
std::string show_run_text(const nlohmann::json& run);

// `results curves`: step, value, time of one metric of one run (UsageError naming the metrics the
// run has when `metric` is not among them).
Grid curve_grid(Store& store, const std::string& id, const std::string& metric);

}  // namespace attnbench::results
