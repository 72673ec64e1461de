// Sweep expansion (docs/sweeps.md, "The file"): base config + [sweep] data + one grid/zip
// combination (or one [[include]]) + one seed -> a TOML table per cell -> the resolved run config
// -> the run id (config::config_hash of the canonical resolved config). Everything is checked
// before any work.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/config/run_config.h"
#include "harness/sweep/sweep_file.h"

namespace attnbench::sweep {

struct Cell {
  std::string id;                 // run id: config::config_hash(config)
  std::string label;              // the varying key=value pairs, e.g. "variant=lazy seed=1"
  std::vector<Setting> settings;  // what this cell sets on top of base + data (seed included)
  bool included = false;          // from an [[include]] rather than the grid
  config::RunConfig config;
};

// An [[include]] cell is base + data + its own settings + the sweep's constants: grid keys with one
// value (and zips with one row) apply to every cell, included ones too.
struct Expansion {
  std::vector<Cell> cells;  // grid order (first key outermost, seeds innermost), then includes
  size_t combinations = 0;  // grid/zip combinations before [[exclude]]
  size_t excluded = 0;      // combinations dropped by [[exclude]]
};

// Throws InputError: more than kMaxCells cells (before building any), a setting the config rejects
// (pointing at the sweep line that set it, with the nearest valid key), two cells that resolve to
// the same run id (naming both and suggesting [[exclude]]), an [[exclude]] that matches nothing,
// and a sweep with no cells.
Expansion expand(const SweepFile& sweep);

// The cell whose run id, unique id prefix (at least 4 characters) or label is `which`; throws
// UsageError listing the labels otherwise.
const Cell& find_cell(const Expansion& e, const std::string& which);

}  // namespace attnbench::sweep
