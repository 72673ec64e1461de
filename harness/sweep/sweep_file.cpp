#include "harness/sweep/sweep_file.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "evals/tasks/task.h"
#include "core/common/regular_file.h"
#include "core/data/hf_model_folder.h"
#include "core/config/toml_bridge.h"
#include "core/config/toml_depth.h"
#include "harness/sweep/values.h"

namespace attnbench::sweep {
namespace {

const std::vector<std::string> kSections = {"sweep", "grid",    "zip",
                                            "include", "exclude", "pretrained"};
const std::vector<std::string> kSweepKeys = {"name",  "base", "seeds",      "tasks",
                                             "data", "limit", "task_limits"};

struct Reader {
  std::string file;  // for positions of nodes that carry none

  SourceLocation at(const toml::node& n) const { return config::where_of(n.source(), file); }
  SourceLocation at(const toml::key& k) const { return config::where_of(k.source(), file); }

  void unknown_key(const toml::key& k, const std::string& section,
                   const std::vector<std::string>& valid) const {
    throw InputError(at(k), "unknown key '" + std::string(k.str()) + "' in " + section +
                                did_you_mean(std::string(k.str()), valid) +
                                "; valid keys: " + join(valid));
  }

  const toml::table& table(const toml::node& n, const std::string& what) const {
    if (!n.is_table()) throw InputError(at(n), what + " must be a table");
    return *n.as_table();
  }

  const toml::array& array(const toml::node& n, const std::string& what) const {
    if (!n.is_array()) throw InputError(at(n), what + " must be a list, e.g. [1, 2]");
    return *n.as_array();
  }

  std::string string(const toml::node& n, const std::string& what) const {
    if (!n.is_string()) throw InputError(at(n), what + " must be a string");
    return n.as_string()->get();
  }

  int64_t integer(const toml::node& n, const std::string& what) const {
    if (!n.is_integer()) throw InputError(at(n), what + " must be an integer");
    return n.as_integer()->get();
  }

  // A setting's value: a scalar that a sweep may hold (values.h, check_sweep_value).
  config::Value value(const toml::node& n, const std::string& what) const {
    config::Value v = config::scalar_value(n, what, file);
    check_sweep_value(v, at(n), what);
    return v;
  }

  // Flattens a table of dotted keys, accepting both `"attention.variant" = ...` and nested
  // `[grid.attention] variant = ...`, in file order (toml++ tables iterate sorted by key).
  void flatten(const toml::table& t, const std::string& prefix,
               std::vector<std::pair<std::string, const toml::node*>>& out,
               std::vector<SourceLocation>& key_where) const {
    for (auto&& [k, v] : t) {
      std::string key = prefix + std::string(k.str());
      if (v.is_table()) {
        flatten(*v.as_table(), key + ".", out, key_where);
      } else {
        out.emplace_back(key, &v);
        key_where.push_back(at(k));
      }
    }
  }

  std::vector<std::pair<std::string, const toml::node*>> entries(
      const toml::table& t, std::vector<SourceLocation>& key_where) const {
    std::vector<std::pair<std::string, const toml::node*>> out;
    std::vector<SourceLocation> where;
    flatten(t, "", out, where);
    std::vector<size_t> order(out.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return std::make_pair(where[a].line, where[a].column) <
             std::make_pair(where[b].line, where[b].column);
    });
    std::vector<std::pair<std::string, const toml::node*>> sorted;
    key_where.clear();
    for (size_t i : order) {
      sorted.push_back(out[i]);
      key_where.push_back(where[i]);
    }
    return sorted;
  }

  // A [grid] key or one [[zip]] table: every value a list of scalars.
  Axis axis(const std::vector<std::pair<std::string, const toml::node*>>& items,
            const std::vector<SourceLocation>& key_where, const std::string& section) const {
    Axis ax;
    for (size_t i = 0; i < items.size(); ++i) {
      const auto& [key, node] = items[i];
      const toml::array& list = array(*node, section + " key '" + key + "'");
      if (list.empty()) throw InputError(at(*node), section + " key '" + key + "' has no values");
      if (list.size() > kMaxCells) {  // before the pairwise duplicate check below
        throw InputError(at(*node), section + " key '" + key + "' lists " +
                                        std::to_string(list.size()) + " values; a sweep has at most " +
                                        std::to_string(kMaxCells) + " cells");
      }
      std::vector<config::Value> values;
      std::vector<SourceLocation> where;
      for (auto&& v : list) {
        config::Value x = value(v, section + " value of '" + key + "'");
        for (size_t j = 0; j < values.size(); ++j) {
          if (same_value(values[j], x)) {
            throw InputError(at(v), section + " key '" + key + "' lists " + label_value(x) +
                                        " twice (first at " + where[j].str() + ")");
          }
        }
        values.push_back(x);
        where.push_back(at(v));
      }
      if (!ax.values.empty() && values.size() != ax.values.size()) {
        throw InputError(at(*node), "[[zip]] lists must have equal lengths: '" + key + "' has " +
                                        std::to_string(values.size()) + " values, '" +
                                        ax.keys[0] + "' has " + std::to_string(ax.values.size()));
      }
      if (ax.values.empty()) {
        ax.values.resize(values.size());
        ax.value_where.resize(values.size());
      }
      for (size_t j = 0; j < values.size(); ++j) {
        ax.values[j].push_back(values[j]);
        ax.value_where[j].push_back(where[j]);
      }
      ax.keys.push_back(key);
      ax.key_where.push_back(key_where[i]);
    }
    return ax;
  }
};

constexpr size_t kMaxSweepNameLength = 128;
// More seeds than any study runs; the list is checked in one pass (a set), not pairwise.
constexpr size_t kMaxSeeds = 10000;

// The name goes into the database, `results table --sweep NAME`, the Slurm job name and comment
// lines of the Slurm script: ASCII letters and digits, then also '.', '_' and '-', keep it one
// shell word on one line everywhere, and never an option ("-x") on a command line.
void check_sweep_name(const std::string& name, const SourceLocation& where) {
  if (name.size() > kMaxSweepNameLength) {
    throw InputError(where, "sweep.name is " + std::to_string(name.size()) + " characters long; at most " +
                                std::to_string(kMaxSweepNameLength) +
                                " (it names the sweep in tables, Slurm job names and file names)");
  }
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (alnum(c) || (i > 0 && (c == '.' || c == '_' || c == '-'))) continue;
    throw InputError(where, "sweep.name \"" + one_line(name) +
                                "\" may only contain letters, digits, '.', '_' and '-', and must "
                                "start with a letter or digit (it names the sweep in the database, "
                                "in Slurm job names and on command lines)");
  }
}

// sweep.seeds: distinct integers, at least one, at most kMaxSeeds.
void parse_seeds(const Reader& r, const toml::node& v, SweepFile& s) {
  s.seeds_where = r.at(v);
  const auto& seeds = r.array(v, "sweep.seeds");
  if (seeds.size() > kMaxSeeds) {
    throw InputError(r.at(v), "sweep.seeds lists " + std::to_string(seeds.size()) +
                                  " seeds; at most " + std::to_string(kMaxSeeds));
  }
  std::set<int64_t> seen;
  for (auto&& x : seeds) {
    int64_t seed = r.integer(x, "each of sweep.seeds");
    if (!seen.insert(seed).second) {
      throw InputError(r.at(x), "sweep.seeds lists seed " + std::to_string(seed) + " twice");
    }
    s.seeds.push_back(seed);
  }
  if (s.seeds.empty()) throw InputError(r.at(v), "sweep.seeds is empty: list at least one seed");
}

// sweep.tasks: task names or groups, expanded, each task once in first-listed order.
void parse_tasks(const Reader& r, const toml::node& v, SweepFile& s) {
  for (auto&& x : r.array(v, "sweep.tasks")) {
    std::string spec = r.string(x, "each of sweep.tasks");
    std::vector<std::string> names;
    try {
      names = evals::expand_task_list(spec);
    } catch (const UsageError& e) {
      throw InputError(r.at(x), e.what());
    }
    for (auto& n : names) {
      if (std::find(s.tasks.begin(), s.tasks.end(), n) == s.tasks.end()) s.tasks.push_back(n);
    }
  }
}

// sweep.task_limits: a positive item limit per registered task.
void parse_task_limits(const Reader& r, const toml::node& v, SweepFile& s) {
  std::vector<SourceLocation> where;
  auto items = r.entries(r.table(v, "sweep.task_limits"), where);
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string& task = items[i].first;
    try {
      evals::find_task(task);
    } catch (const UsageError& e) {
      throw InputError(where[i], e.what());
    }
    int64_t n = r.integer(*items[i].second, "sweep.task_limits." + task);
    if (n <= 0) throw InputError(r.at(*items[i].second), "sweep.task_limits." + task + " must be positive");
    s.task_limits[task] = n;
  }
}

void parse_sweep_section(const Reader& r, const toml::table& t, SweepFile& s) {
  for (auto&& [k, v] : t) {
    std::string key(k.str());
    if (key == "name") {
      s.name = r.string(v, "sweep.name");
      check_sweep_name(s.name, r.at(v));
    } else if (key == "base") {
      s.base = s.file.parent_path() / r.string(v, "sweep.base");
      s.base_where = r.at(v);
    } else if (key == "seeds") {
      parse_seeds(r, v, s);
    } else if (key == "tasks") {
      parse_tasks(r, v, s);
    } else if (key == "limit") {
      s.limit = r.integer(v, "sweep.limit");
      if (*s.limit <= 0) throw InputError(r.at(v), "sweep.limit must be positive (omit it for all items)");
    } else if (key == "task_limits") {
      parse_task_limits(r, v, s);
    } else if (key == "data") {
      std::vector<SourceLocation> where;
      auto items = r.entries(r.table(v, "sweep.data"), where);
      for (size_t i = 0; i < items.size(); ++i) {
        s.data.push_back({"data." + items[i].first,
                          r.value(*items[i].second, "sweep.data." + items[i].first),
                          r.at(*items[i].second), where[i]});
      }
    } else {
      r.unknown_key(k, "[sweep]", kSweepKeys);
    }
  }
  SourceLocation header = r.at(t);
  if (s.name.empty()) throw InputError(header, "[sweep] needs a name, e.g. name = \"table2\"");
  if (s.base.empty()) {
    throw InputError(header, "[sweep] needs base = \"<run config>\" (a path relative to the sweep file)");
  }
}

// Settings of one [[include]] / [[exclude]] table, each key checked against the varying keys.
std::vector<std::pair<std::string, const toml::node*>> checked_entries(
    const Reader& r, const toml::node& node, const std::string& section,
    const std::vector<std::string>& varying, std::vector<SourceLocation>& key_where) {
  const toml::table& t = r.table(node, section);
  auto items = r.entries(t, key_where);
  if (items.empty()) throw InputError(r.at(node), section + " is empty");
  for (size_t i = 0; i < items.size(); ++i) {
    if (std::find(varying.begin(), varying.end(), items[i].first) == varying.end()) {
      throw InputError(key_where[i],
                       section + " names '" + items[i].first + "', which no [grid] or [[zip]] varies" +
                           did_you_mean(items[i].first, varying) +
                           (varying.empty() ? "" : "; varying keys: " + join(varying)));
    }
  }
  return items;
}

// The axis varying `key` and the key's column in it (the key is known to vary).
std::pair<const Axis*, size_t> find_axis(const SweepFile& s, const std::string& key) {
  for (const Axis& ax : s.axes) {
    for (size_t c = 0; c < ax.keys.size(); ++c) {
      if (ax.keys[c] == key) return {&ax, c};
    }
  }
  return {nullptr, 0};
}

// An exclude value that no grid/zip value equals can never match: a typo.
void check_exclude_value(const SweepFile& s, const std::string& key, const config::Value& v,
                         const SourceLocation& where) {
  auto [axis, column] = find_axis(s, key);
  std::vector<std::string> listed;
  for (auto& row : axis->values) {
    if (same_value(row[column], v)) return;
    listed.push_back(label_value(row[column]));
  }
  throw InputError(where, "[[exclude]] value " + label_value(v) + " for '" + key +
                              "' is not among its grid values (" + join(listed) + ")" +
                              did_you_mean(label_value(v), listed));
}

// Every top-level table is one a sweep file has.
void check_sections(const Reader& r, const toml::table& root) {
  for (auto&& [k, v] : root) {
    if (std::find(kSections.begin(), kSections.end(), std::string(k.str())) == kSections.end()) {
      throw InputError(r.at(k), "unknown section [" + std::string(k.str()) + "]" +
                                    did_you_mean(std::string(k.str()), kSections) +
                                    "; a sweep file has [sweep], [grid], [[zip]], [[include]], "
                                    "[[exclude]] and [[pretrained]]");
    }
  }
}

// The axes of [grid] (one key each) and [[zip]] (keys varying together) into s.axes; returns the
// varying keys, sorted. A key may vary in one place only, and train.seed not beside [sweep] seeds.
std::vector<std::string> parse_axes(const Reader& r, const toml::table& root, SweepFile& s) {
  std::set<std::string> seen;
  auto add_axis = [&](Axis ax) {
    for (size_t i = 0; i < ax.keys.size(); ++i) {
      if (ax.keys[i] == "train.seed" && !s.seeds.empty()) {
        throw InputError(ax.key_where[i], "train.seed is set by [sweep] seeds; vary it there");
      }
      if (!seen.insert(ax.keys[i]).second) {
        throw InputError(ax.key_where[i], "'" + ax.keys[i] + "' varies twice ([grid] and [[zip]] "
                                          "keys must be distinct)");
      }
    }
    s.axes.push_back(std::move(ax));
  };
  if (const toml::node* grid = root.get("grid")) {
    std::vector<SourceLocation> where;
    auto items = r.entries(r.table(*grid, "[grid]"), where);
    for (size_t i = 0; i < items.size(); ++i) {
      add_axis(r.axis({items[i]}, {where[i]}, "[grid]"));
    }
  }
  if (const toml::node* zip = root.get("zip")) {
    for (auto&& z : r.array(*zip, "[[zip]]")) {
      std::vector<SourceLocation> where;
      auto items = r.entries(r.table(z, "[[zip]]"), where);
      if (items.empty()) throw InputError(r.at(z), "[[zip]] is empty");
      add_axis(r.axis(items, where, "[[zip]]"));
    }
  }
  return std::vector<std::string>(seen.begin(), seen.end());
}

// One [[exclude]]: per varying key, a value or a list of values (any of them), each a grid value.
Exclusion parse_exclude(const Reader& r, const toml::node& x, const SweepFile& s,
                        const std::vector<std::string>& varying) {
  std::vector<SourceLocation> where;
  auto items = checked_entries(r, x, "[[exclude]]", varying, where);
  Exclusion ex;
  ex.where = r.at(x);
  for (size_t i = 0; i < items.size(); ++i) {
    Exclusion::Match m{items[i].first, {}, where[i]};
    const toml::node& v = *items[i].second;
    if (v.is_array()) {  // any of several values
      for (auto&& e : *v.as_array()) {
        m.any_of.push_back(r.value(e, "[[exclude]] value of '" + m.key + "'"));
        check_exclude_value(s, m.key, m.any_of.back(), r.at(e));
      }
    } else {
      m.any_of.push_back(r.value(v, "[[exclude]] value of '" + m.key + "'"));
      check_exclude_value(s, m.key, m.any_of.back(), r.at(v));
    }
    ex.matches.push_back(std::move(m));
  }
  return ex;
}

// One [[include]]: a setting per varying key it names.
std::vector<Setting> parse_include(const Reader& r, const toml::node& x, const std::vector<std::string>& varying) {
  std::vector<SourceLocation> where;
  auto items = checked_entries(r, x, "[[include]]", varying, where);
  std::vector<Setting> cell;
  for (size_t i = 0; i < items.size(); ++i) {
    cell.push_back({items[i].first, r.value(*items[i].second, "[[include]] value of '" + items[i].first + "'"),
                    r.at(*items[i].second), where[i]});
  }
  return cell;
}

// [[pretrained]] path = "..." entries: each a Hugging Face model folder (config.json with a
// model_type), each once.
std::vector<PretrainedEntry> parse_pretrained(const Reader& r, const toml::node& node,
                                              const std::filesystem::path& sweep_file) {
  std::vector<PretrainedEntry> out;
  for (auto&& x : r.array(node, "[[pretrained]]")) {
    const toml::table& t = r.table(x, "[[pretrained]]");
    const toml::node* path = t.get("path");
    for (auto&& [k, v] : t) {
      if (k.str() != "path") r.unknown_key(k, "[[pretrained]]", {"path"});
    }
    if (!path) throw InputError(r.at(x), "[[pretrained]] needs path = \"<Hugging Face model folder>\"");
    PretrainedEntry e{sweep_file.parent_path() / r.string(*path, "[[pretrained]] path"), r.at(*path)};
    if (!data::is_hf_model_folder(e.path)) {
      throw InputError(e.where, "[[pretrained]] path " + e.path.string() +
                                    " is not a Hugging Face model folder (a config.json with a "
                                    "model_type; docs/pretrained.md)");
    }
    for (const PretrainedEntry& seen : out) {
      std::error_code ec;
      if (std::filesystem::equivalent(seen.path, e.path, ec)) {
        throw InputError(e.where, "[[pretrained]] lists " + e.path.string() + " twice (first at " +
                                      seen.where.str() + ")");
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

SweepFile parse_sweep_text(const std::string& text, const std::filesystem::path& file) {
  Reader r{file.string()};
  config::check_toml_depth(text, file.string());
  toml::table root;
  try {
    root = toml::parse(text, file.string());
  } catch (const toml::parse_error& e) {
    throw InputError(config::where_of(e.source(), file.string()), std::string(e.description()));
  }
  SweepFile s;
  s.file = file;
  check_sections(r, root);
  const toml::node* sweep = root.get("sweep");
  if (!sweep) throw InputError({file.string()}, "missing [sweep] section (name, base, seeds, tasks)");
  parse_sweep_section(r, r.table(*sweep, "[sweep]"), s);
  const std::vector<std::string> varying = parse_axes(r, root, s);
  if (const toml::node* exclude = root.get("exclude")) {
    for (auto&& x : r.array(*exclude, "[[exclude]]")) s.excludes.push_back(parse_exclude(r, x, s, varying));
  }
  if (const toml::node* include = root.get("include")) {
    for (auto&& x : r.array(*include, "[[include]]")) s.includes.push_back(parse_include(r, x, varying));
  }
  if (const toml::node* pretrained = root.get("pretrained")) {
    s.pretrained = parse_pretrained(r, *pretrained, file);
  }
  return s;
}

SweepFile parse_sweep_file(const std::filesystem::path& file) {
  return parse_sweep_text(read_regular_file(file, "sweep file"), file);
}

}  // namespace attnbench::sweep
