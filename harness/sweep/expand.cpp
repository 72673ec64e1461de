#include "harness/sweep/expand.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "core/common/regular_file.h"
#include "core/config/toml_bridge.h"
#include "core/config/toml_depth.h"
#include "harness/sweep/values.h"

namespace attnbench::sweep {
namespace {

// The base config, parsed afresh for every cell: toml++ does not copy source positions, so a
// parsed table is the only way for the config layer's errors to keep pointing into the base file.
class Base {
 public:
  explicit Base(const SweepFile& s) : path_(s.base.string()) {
    try {
      text_ = read_regular_file(s.base, "base config");
    } catch (const UsageError& e) {
      throw InputError(s.base_where, e.what());
    }
  }

  toml::table table() const {
    config::check_toml_depth(text_, path_);
    try {
      return toml::parse(text_, path_);
    } catch (const toml::parse_error& e) {
      throw InputError(config::where_of(e.source(), path_), std::string(e.description()));
    }
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_, text_;
};

// The message of an error without its "file:line:col: " prefix, to re-anchor it elsewhere.
std::string bare_message(const InputError& e) {
  std::string what = e.what(), prefix = e.where().str() + ": ";
  return what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
}

// Re-anchors the config layer's complaint about one sweep setting at the line that wrote it: the
// key for an unknown key, else the value.
[[noreturn]] void blame(const Setting& s, const InputError& e, const std::string& prefix = "") {
  std::string msg = bare_message(e);
  bool about_key = msg.find("unknown key") != std::string::npos;
  throw InputError(about_key ? s.key_where : s.where, prefix + msg);
}

config::RunConfig resolve(const Base& base, const std::vector<Setting>& data,
                          const std::vector<Setting>& settings) {
  toml::table t = base.table();
  for (auto& s : data) config::assign_dotted(t, s.key, s.value);
  for (auto& s : settings) config::assign_dotted(t, s.key, s.value);
  return config::resolve_run_config(t, base.path());
}

std::string describe(const std::vector<Setting>& settings) {
  std::vector<std::string> parts;
  for (auto& s : settings) parts.push_back(s.key + "=" + label_value(s.value));
  return parts.empty() ? "(base only)" : join(parts, " ");
}

// Resolves one cell. When the config rejects it, finds the setting that is rejected on its own
// and points at the sweep line that wrote it; otherwise blames the combination.
config::RunConfig resolve_cell(const Base& base, const SweepFile& sweep,
                               const std::vector<Setting>& settings) {
  try {
    return resolve(base, sweep.data, settings);
  } catch (const InputError& whole) {
    for (auto& d : sweep.data) {
      try {
        resolve(base, {d}, {});
      } catch (const InputError& e) {
        blame(d, e, "sweep.data: ");
      }
    }
    for (auto& s : settings) {
      try {
        resolve(base, sweep.data, {s});
      } catch (const InputError& e) {
        blame(s, e);
      }
    }
    try {
      resolve(base, {}, {});
    } catch (const InputError&) {
      throw;  // the base config itself is invalid: its own error points into it
    }
    throw InputError(settings.empty() ? sweep.base_where : settings.front().where,
                     "the cell " + describe(settings) + " is not a valid run config: " + whole.what());
  }
}

bool excluded_by(const Exclusion& ex, const std::vector<Setting>& settings) {
  for (auto& m : ex.matches) {
    auto it = std::find_if(settings.begin(), settings.end(),
                           [&](const Setting& s) { return s.key == m.key; });
    if (it == settings.end()) return false;
    if (std::none_of(m.any_of.begin(), m.any_of.end(),
                     [&](const config::Value& v) { return same_value(v, it->value); })) {
      return false;
    }
  }
  return true;
}

// The grid/zip combinations (first axis outermost), each as its settings.
std::vector<std::vector<Setting>> combinations(const SweepFile& s) {
  std::vector<std::vector<Setting>> out;
  std::vector<size_t> index(s.axes.size(), 0);
  while (true) {
    std::vector<Setting> cell;
    for (size_t a = 0; a < s.axes.size(); ++a) {
      const Axis& ax = s.axes[a];
      for (size_t k = 0; k < ax.keys.size(); ++k) {
        cell.push_back({ax.keys[k], ax.values[index[a]][k], ax.value_where[index[a]][k],
                        ax.key_where[k]});
      }
    }
    out.push_back(std::move(cell));
    size_t a = s.axes.size();
    while (a > 0) {
      --a;
      if (++index[a] < s.axes[a].values.size()) break;
      index[a] = 0;
      if (a == 0) return out;
    }
    if (s.axes.empty()) return out;
  }
}

// Labels show only the keys whose value differs between cells, by their last component when
// that is unambiguous ("variant=lazy" rather than "attention.variant=lazy").
void assign_labels(std::vector<Cell>& cells) {
  std::vector<std::string> keys;
  std::map<std::string, std::set<std::string>> seen;
  std::map<std::string, size_t> present;
  for (auto& c : cells) {
    for (auto& s : c.settings) {
      if (!seen.count(s.key)) keys.push_back(s.key);
      seen[s.key].insert(label_value(s.value));
      ++present[s.key];
    }
  }
  std::vector<std::string> varying;
  for (auto& k : keys) {
    if (seen[k].size() > 1 || present[k] < cells.size()) varying.push_back(k);
  }
  std::map<std::string, int> short_count;
  auto short_name = [](const std::string& k) {
    if (k == "train.seed") return std::string("seed");
    auto dot = k.rfind('.');
    return dot == std::string::npos ? k : k.substr(dot + 1);
  };
  for (auto& k : varying) ++short_count[short_name(k)];
  for (auto& c : cells) {
    std::vector<std::string> parts;
    for (auto& k : varying) {
      for (auto& s : c.settings) {
        if (s.key != k) continue;
        std::string name = short_count[short_name(k)] == 1 ? short_name(k) : k;
        parts.push_back(name + "=" + label_value(s.value));
      }
    }
    c.label = parts.empty() ? "base" : join(parts, " ");
  }
}

// Settings on which two cells differ, for the collision message.
std::string difference(const Cell& a, const Cell& b) {
  std::vector<std::string> parts;
  auto value_in = [](const Cell& c, const std::string& key) -> std::string {
    for (auto& s : c.settings) {
      if (s.key == key) return label_value(s.value);
    }
    return "(base)";
  };
  std::set<std::string> keys;
  for (auto& s : a.settings) keys.insert(s.key);
  for (auto& s : b.settings) keys.insert(s.key);
  for (auto& k : keys) {
    std::string va = value_in(a, k), vb = value_in(b, k);
    if (va != vb) parts.push_back(k + " (" + va + " vs " + vb + ")");
  }
  return join(parts, ", ");
}

// Refuses a sweep of more than kMaxCells cells before any is built: (grid combinations +
// includes) x seeds, multiplied with overflow checks since every factor comes from the file.
void check_size(const SweepFile& s) {
  uint64_t combinations = 1;
  bool overflow = false;
  std::vector<std::string> factors;
  for (const Axis& ax : s.axes) {
    overflow = overflow || __builtin_mul_overflow(combinations, ax.values.size(), &combinations);
    factors.push_back(fmt::format("{} values of '{}'", ax.values.size(), join(ax.keys, "'+'")));
  }
  const uint64_t seeds = std::max<size_t>(1, s.seeds.size());
  uint64_t cells = 0;
  overflow = overflow || __builtin_add_overflow(combinations, s.includes.size(), &cells) ||
             __builtin_mul_overflow(cells, seeds, &cells);
  if (!overflow && cells <= kMaxCells) return;
  throw InputError(SourceLocation{s.file.string()},
                   fmt::format("the sweep expands to {} cells ({}{}{}); at most {} are supported: "
                               "split it into several sweeps",
                               overflow ? "more than 2^64" : std::to_string(cells),
                               join(factors, " x "),
                               s.includes.empty() ? "" : fmt::format(" + {} [[include]]", s.includes.size()),
                               s.seeds.empty() ? "" : fmt::format(", x {} seeds", s.seeds.size()),
                               kMaxCells));
}

// The grid combinations no [[exclude]] drops, counting the dropped ones in out.excluded; an
// [[exclude]] that matches nothing is a mistake in the file (a misspelt key or value).
std::vector<std::vector<Setting>> kept_combinations(const SweepFile& sweep, Expansion& out) {
  auto combos = combinations(sweep);
  out.combinations = combos.size();
  std::vector<size_t> exclude_hits(sweep.excludes.size(), 0);
  std::vector<std::vector<Setting>> kept;
  for (auto& c : combos) {
    bool drop = false;
    for (size_t i = 0; i < sweep.excludes.size(); ++i) {
      if (excluded_by(sweep.excludes[i], c)) {
        ++exclude_hits[i];
        drop = true;
      }
    }
    if (drop) {
      ++out.excluded;
    } else {
      kept.push_back(std::move(c));
    }
  }
  for (size_t i = 0; i < sweep.excludes.size(); ++i) {
    if (exclude_hits[i] == 0) {
      throw InputError(sweep.excludes[i].where,
                       "this [[exclude]] matches no grid combination: check its keys and values");
    }
  }
  return kept;
}

// The settings of each [[include]]. A one-value grid key or one-row zip fixes that setting for
// the whole sweep, so the included cells get it too (unless they set it themselves): e.g. a
// shorter train.steps for every cell.
std::vector<std::vector<Setting>> included_settings(const SweepFile& sweep) {
  std::vector<Setting> constants;
  for (const Axis& ax : sweep.axes) {
    if (ax.values.size() != 1) continue;
    for (size_t k = 0; k < ax.keys.size(); ++k) {
      constants.push_back({ax.keys[k], ax.values[0][k], ax.value_where[0][k], ax.key_where[k]});
    }
  }
  std::vector<std::vector<Setting>> out;
  for (auto& inc : sweep.includes) {
    std::vector<Setting> settings;
    for (auto& c : constants) {
      if (std::none_of(inc.begin(), inc.end(), [&](const Setting& s) { return s.key == c.key; })) {
        settings.push_back(c);
      }
    }
    settings.insert(settings.end(), inc.begin(), inc.end());
    out.push_back(std::move(settings));
  }
  return out;
}

// One cell per seed of a combination's settings, resolved to its run config.
void add_seeded_cells(const Base& base, const SweepFile& sweep, const std::vector<Setting>& settings,
                      bool included, std::vector<Cell>& cells) {
  std::vector<std::optional<int64_t>> seeds;
  if (sweep.seeds.empty()) seeds.push_back(std::nullopt);
  for (int64_t s : sweep.seeds) seeds.push_back(s);
  for (auto& seed : seeds) {
    Cell cell;
    cell.settings = settings;
    if (seed) cell.settings.push_back({"train.seed", *seed, sweep.seeds_where, sweep.seeds_where});
    cell.included = included;
    cell.config = resolve_cell(base, sweep, cell.settings);
    cell.id = config::config_hash(cell.config);
    // Evaluation settings never enter the run id (config_hash drops [eval]); they go into the
    // stored config so that each run records what it was scored on.
    if (!sweep.tasks.empty()) cell.config.eval.tasks = sweep.tasks;
    if (sweep.limit) cell.config.eval.limit = *sweep.limit;
    for (auto& [task, n] : sweep.task_limits) cell.config.eval.task_limits[task] = n;
    cells.push_back(std::move(cell));
  }
}

// Two cells with one run config would train one model under two labels: refused, naming them.
void refuse_collisions(const SweepFile& sweep, const std::vector<Cell>& cells) {
  std::map<std::string, size_t> by_id;
  std::vector<std::string> collisions;
  for (size_t i = 0; i < cells.size(); ++i) {
    auto [it, fresh] = by_id.emplace(cells[i].id, i);
    if (fresh) continue;
    const Cell& a = cells[it->second];
    const Cell& b = cells[i];
    collisions.push_back("'" + a.label + "' and '" + b.label + "' (run " + b.id +
                         "; they differ only in " + difference(a, b) + ")");
  }
  if (collisions.empty()) return;
  throw InputError(
      SourceLocation{sweep.file.string()},
      std::to_string(collisions.size()) + " pair(s) of cells resolve to the same run config: " +
          join(collisions, "; ") +
          ". A setting that does not change what is trained is left out of the run id: a "
          "parameter that does not apply to the variant (e.g. attention.tau_form without the "
          "elastic normalizer) or an execution-only key (attention.backend, train.threads, "
          "train.device, ...). Drop the duplicates with [[exclude]] (and add back the cells you "
          "want with [[include]]).");
}

}  // namespace

Expansion expand(const SweepFile& sweep) {
  check_size(sweep);
  Base base(sweep);
  Expansion out;
  const std::vector<std::vector<Setting>> grid = kept_combinations(sweep, out);
  const std::vector<std::vector<Setting>> included = included_settings(sweep);
  if (grid.empty() && included.empty()) {
    throw InputError(SourceLocation{sweep.file.string()},
                     "the sweep has no cells: [[exclude]] drops all " +
                         std::to_string(out.combinations) +
                         " grid combinations and there is no [[include]]");
  }
  for (const auto& settings : grid) add_seeded_cells(base, sweep, settings, false, out.cells);
  for (const auto& settings : included) add_seeded_cells(base, sweep, settings, true, out.cells);
  assign_labels(out.cells);
  refuse_collisions(sweep, out.cells);
  return out;
}

const Cell& find_cell(const Expansion& e, const std::string& which) {
  for (auto& c : e.cells) {
    if (c.id == which || c.label == which) return c;
  }
  const Cell* match = nullptr;
  if (which.size() >= 4) {
    for (auto& c : e.cells) {
      if (c.id.rfind(which, 0) != 0) continue;
      if (match) throw UsageError("--only " + which + " matches several run ids; give more digits");
      match = &c;
    }
  }
  if (match) return *match;
  std::vector<std::string> labels;
  for (auto& c : e.cells) labels.push_back(c.label);
  throw UsageError("--only " + which + ": no cell has that run id or label" +
                   did_you_mean(which, labels) + " (attnbench sweep FILE --dry-run lists them)");
}

}  // namespace attnbench::sweep
