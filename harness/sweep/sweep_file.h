// A sweep file (docs/sweeps.md, "The file"): [sweep] name, base, seeds, tasks, data, limit; [grid],
// [[zip]], [[include]], [[exclude]], [[pretrained]]. Parsing keeps every value's file:line:col so that expansion
// errors point at the line the user wrote.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/config/value.h"

namespace attnbench::sweep {

// The most cells a sweep may expand to, counted before [[exclude]]: each cell is resolved from the
// base config and listed in the store, so a list pasted in by mistake (a range of 10,000 learning
// rates) must fail at once rather than exhaust memory and time; split a larger study into sweeps.
constexpr uint64_t kMaxCells = 10000;

// One dotted config key set to one scalar value, with where it was written.
struct Setting {
  std::string key;  // "attention.variant"
  config::Value value;
  SourceLocation where;      // the value
  SourceLocation key_where;  // the key (unknown-key errors point here)
};

// One dimension of the cartesian product: a [grid] key (one key) or a [[zip]] table (several keys
// whose lists vary together). values[i] holds one value per key, in `keys` order.
struct Axis {
  std::vector<std::string> keys;
  std::vector<SourceLocation> key_where;
  std::vector<std::vector<config::Value>> values;
  std::vector<std::vector<SourceLocation>> value_where;
};

// An [[exclude]] entry: a cell is dropped when every key has one of the listed values.
struct Exclusion {
  struct Match {
    std::string key;
    std::vector<config::Value> any_of;
    SourceLocation where;
  };
  std::vector<Match> matches;
  SourceLocation where;  // the [[exclude]] header
};

// A [[pretrained]] entry: a Hugging Face model folder scored on the sweep's tasks beside the
// trained cells, so that a public model sits in the sweep's table (docs/sweeps.md, "Pretrained
// models"). It is evaluated, never trained.
struct PretrainedEntry {
  std::filesystem::path path;  // resolved: relative to the sweep file's folder
  SourceLocation where;        // the path value
};

struct SweepFile {
  std::filesystem::path file;  // the sweep file as given
  std::string name;
  std::filesystem::path base;  // resolved: relative to the sweep file's folder
  SourceLocation base_where;
  std::vector<int64_t> seeds;  // empty: every cell keeps the base config's train.seed
  SourceLocation seeds_where;
  std::vector<std::string> tasks;  // expanded task names ("paper", "all" allowed in the file)
  std::optional<int64_t> limit;    // eval --limit for every cell
  std::map<std::string, int64_t> task_limits;  // per-task limits replacing `limit` (eval.task_limits)
  std::vector<Setting> data;       // overrides for [data], as "data.<key>"
  std::vector<Axis> axes;          // grid keys (file order), then zips (file order)
  std::vector<std::vector<Setting>> includes;
  std::vector<Exclusion> excludes;
  std::vector<PretrainedEntry> pretrained;
};

// Reads and checks a sweep file's structure. Throws InputError (file:line:col) for TOML syntax
// errors, unknown sections or keys (with the nearest valid one), wrong types, zip lists of unequal
// length, exclude/include keys that no grid or zip varies, and a [[pretrained]] path that is not a
// Hugging Face model folder (or is listed twice).
SweepFile parse_sweep_file(const std::filesystem::path& file);
SweepFile parse_sweep_text(const std::string& text, const std::filesystem::path& file);

}  // namespace attnbench::sweep
