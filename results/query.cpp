#include "results/query.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/common/paper_tasks.h"
#include "results/runs.h"
#include "results/schema.h"
#include "results/sqlite.h"
#include "results/store.h"
#include "results/table_cells.h"

namespace attnbench::results {

namespace {

constexpr const char* kSeedKey = "train.seed";
constexpr const char* kVariantKey = "attention.variant";
constexpr const char* kPretrainedKey = "pretrained.name";

// The runs a table is over, as SQL: "IN (...)" taking one parameter, `bind`: a sweep's members,
// or the runs --runs names (standalone runs: `attnbench train`, `eval --db`, `attn-stats --db`).
struct Members {
  std::string in;
  std::string bind;
  std::string what;  // for messages: "sweep 'x'" or "the runs given"
};
Members members(const TableRequest& req) {
  if (req.runs.empty()) {
    return {"IN (SELECT run FROM sweep_runs WHERE sweep = ?)", req.sweep, "sweep '" + req.sweep + "'"};
  }
  return {"IN (SELECT value FROM json_each(?))", nlohmann::json(req.runs).dump(), "the runs given"};
}

std::vector<std::string> param_keys(Db& db, const Members& m) {
  Stmt s = db.prepare("SELECT DISTINCT key FROM params WHERE run " + m.in + " ORDER BY key");
  s.bind(1, m.bind);
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.text(0));
  return out;
}

// Column and key names from the user are only ever compared with names read from the store.
void require_key(const std::string& key, const std::vector<std::string>& keys, const char* option,
                 const Members& m) {
  if (std::find(keys.begin(), keys.end(), key) != keys.end()) return;
  throw UsageError(std::string(option) + ": no param '" + key + "' in " + m.what +
                   did_you_mean(key, keys));
}

std::optional<double> parse_number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

// The runs of a sweep that pass every --where. The SQL text is a fixed fragment repeated once per
// condition; keys and values are bound. Numeric params also match numerically ("0.50" == 0.5).
std::vector<SweepRun> select_runs(Db& db, const TableRequest& req) {
  const Members m = members(req);
  std::string sql = "SELECT r.id, r.status FROM runs r WHERE r.id " + m.in;
  for (size_t i = 0; i < req.where.size(); ++i) {
    sql += " AND r.id IN (SELECT run FROM params WHERE key = ? AND (value = ? OR "
           "(type IN ('int', 'float') AND CAST(value AS REAL) = ?)))";
  }
  sql += " ORDER BY r.created, r.rowid";
  Stmt s = db.prepare(sql);
  int i = 1;
  s.bind(i++, m.bind);
  for (const auto& [key, value] : req.where) {
    s.bind(i++, key);
    s.bind(i++, value);
    if (auto num = parse_number(value)) {
      s.bind(i++, *num);
    } else {
      s.bind_null(i++);
    }
  }
  std::vector<SweepRun> runs;
  std::map<std::string, size_t> index;
  while (s.step()) {
    index[s.text(0)] = runs.size();
    runs.push_back({s.text(0), parse_status(s.text(1)), {}});
  }
  Stmt p = db.prepare("SELECT run, key, value FROM params WHERE run " + m.in);
  p.bind(1, m.bind);
  while (p.step()) {
    auto it = index.find(p.text(0));
    if (it != index.end()) runs[it->second].params[p.text(1)] = p.text(2);
  }
  return runs;
}

std::string param_of(const SweepRun& r, const std::string& key) {
  auto it = r.params.find(key);
  return it == r.params.end() ? "" : it->second;
}

size_t group_count(const std::vector<SweepRun>& runs, const std::vector<std::string>& keys) {
  std::set<std::vector<std::string>> groups;
  for (const SweepRun& r : runs) {
    std::vector<std::string> g;
    for (const auto& k : keys) g.push_back(param_of(r, k));
    groups.insert(g);
  }
  return groups.size();
}

std::vector<std::string> default_rows(const std::vector<SweepRun>& runs) {
  std::set<std::string> keys;
  for (const SweepRun& r : runs)
    for (const auto& kv : r.params) keys.insert(kv.first);
  std::vector<std::string> chosen;
  if (keys.count(kVariantKey)) chosen.push_back(kVariantKey);
  // An imported model ([[pretrained]] cells) is named by its folder, not by the shape keys that
  // also tell it from the trained cells.
  if (keys.count(kPretrainedKey)) chosen.push_back(kPretrainedKey);
  // Greedy: a varying key joins only if it splits some existing group, so keys that merely
  // restate the variant (its preset's position and normaliser) are left out.
  for (const std::string& key : keys) {
    if (key == kSeedKey || key == kVariantKey || key == kPretrainedKey) continue;
    std::vector<std::string> with = chosen;
    with.push_back(key);
    if (group_count(runs, with) > group_count(runs, chosen)) chosen.push_back(key);
  }
  return chosen;
}

// Model-level attention statistics (layer = head = -1, evals/diagnostics) shown as diagnostic
// columns: the first table a user sees shows how each variant allocates attention (sink, sparsity).
// gu_sink_rate is Gu et al.'s sink rate, Sink_1 (attn_stats sink_k at k = 1). Sparsity (exact
// zeros) stands beside the Lazy authors' nonzero_ratio (weights above 1e-6), which counts a
// softmax's negligible weights as zeros too: a variant that zeroes weights already near 0 shows
// sparsity over softmax's 0 but about softmax's nonzero_ratio.
constexpr const char* kDiagnostics[] = {"sink_mass", "gu_sink_rate", "sparsity", "nonzero_ratio"};

// Sink mass beside what uniform attention gives: query i spreads 1/(i+1) over its i+1 keys, so
// the mean over the T query rows of a window is H_T / T (0.024 at T = 256): a value near it means
// no sink, however small it looks.
void add_uniform_reference(ResultTable& table, const std::set<int64_t>& windows) {
  std::vector<std::string> refs;
  for (int64_t t : windows) {
    double harmonic = 0;
    for (int64_t i = 1; i <= t; ++i) harmonic += 1.0 / static_cast<double>(i);
    refs.push_back(fmt::format("{:.3f} at T = {}", harmonic / static_cast<double>(t), t));
  }
  table.notes.push_back(
      "sink mass reference: uniform attention over windows of T tokens gives H_T / T" +
      (refs.empty() ? std::string(" (the window length is not recorded)") : ": " + join(refs)) +
      "; softmax without a sink stays near it");
}

// How the attention statistics were measured, when every run's were measured alike (otherwise
// mark_other_scoring marks the cells and names each measurement).
void add_measurement_note(ResultTable& table, const StoredValues& stored) {
  std::set<std::string> how;
  for (const auto& [key, value] : stored.values) {
    if (std::get<1>(key) == "attention") how.insert(value.scoring);
  }
  if (how.size() == 1 && *how.begin() != kUnrecordedMeasurement) {
    table.notes.push_back("attention statistics measured on " + *how.begin());
  }
}

// Every --where and --rows key must be a param of the sweep.
void check_request(Db& db, const TableRequest& req) {
  if (req.runs.empty()) require_sweep(db, req.sweep);
  const Members m = members(req);
  std::vector<std::string> keys = param_keys(db, m);
  for (const auto& w : req.where) require_key(w.first, keys, "--where", m);
  for (const auto& r : req.rows) require_key(r, keys, "--rows", m);
}

// The names of MetricChoice, in the enum's order.
const char* const kMetricChoices[] = {"auto", "acc", "acc_norm", "logprob", "bits_per_byte"};

std::string metric_choice_name(MetricChoice choice) { return kMetricChoices[static_cast<int>(choice)]; }

StoredValues load_values(Db& db, const Members& m, const std::vector<SweepRun>& runs) {
  std::set<std::string> selected;
  for (const SweepRun& r : runs) selected.insert(r.id);
  StoredValues out;
  {
    Stmt s = db.prepare("SELECT run, task, metric, value, stderr, n, protocol_version, bos "
                        "FROM evals WHERE run " + m.in + " ORDER BY rowid");
    s.bind(1, m.bind);
    while (s.step()) {
      if (!selected.count(s.text(0))) continue;
      std::string task = s.text(1), metric = s.text(2);
      if (!out.task_metrics.count(task)) out.task_order.push_back(task);
      out.task_metrics[task].insert(metric);
      out.values[{s.text(0), task, metric}] = {
          s.optional_real(3), s.optional_real(4),
          fmt::format("{} items, protocol {}, bos {}", s.integer(5), s.text(6), s.text(7))};
    }
  }
  // How each run's statistics were measured: cells measured otherwise do not compare, and are
  // marked as differently scored tasks are (mark_other_scoring).
  std::map<std::string, AttnMeasurement> measured;
  if (schema_version(db) >= 4) {
    for (const std::string& run : selected) {
      if (auto a = read_attn_measurement(db, run)) measured[run] = *a;
    }
  }
  Stmt s = db.prepare("SELECT run, stat, value FROM attn_stats WHERE run " + m.in +
                      " AND layer = -1 AND head = -1 AND "
                      "((idx = -1 AND stat IN ('sink_mass', 'sparsity', 'nonzero_ratio')) OR "
                      "(idx = 1 AND stat = 'sink_k'))");
  s.bind(1, m.bind);
  while (s.step()) {
    if (!selected.count(s.text(0))) continue;
    const std::string stat = s.text(1) == "sink_k" ? "gu_sink_rate" : s.text(1);
    out.diagnostics_present.insert(stat);
    const auto how = measured.find(s.text(0));
    // The sink mass's uniform reference is that of the windows it was measured in (not Gu et
    // al.'s shorter Sink_k windows, sink_k_window).
    if (how != measured.end()) out.sink_windows.insert(how->second.window);
    out.values[{s.text(0), "attention", stat}] = {
        s.optional_real(2), std::nullopt,
        how == measured.end() ? kUnrecordedMeasurement : how->second.describe()};
  }
  return out;
}

// --tasks, or every evaluated task in recorded order; each must have evals.
std::vector<std::string> table_tasks(const TableRequest& req, const StoredValues& stored) {
  std::vector<std::string> tasks = req.tasks.empty() ? stored.task_order : req.tasks;
  for (const std::string& t : tasks) {
    if (!stored.task_metrics.count(t)) {
      throw UsageError("--tasks: no evals of task '" + t + "' in " + members(req).what +
                       did_you_mean(t, stored.task_order) +
                       (stored.task_order.empty() ? "; nothing is evaluated yet"
                                                  : "; evaluated: " + join(stored.task_order)));
    }
  }
  return tasks;
}

// --metric logprob | bits_per_byte: the task's one column, the gold continuation's signal
// (docs/evaluation.md); never in Avg, which averages accuracies.
void add_gold_column(ResultTable& table, const std::string& task, MetricChoice choice,
                     const std::set<std::string>& reported) {
  const bool bpb = choice == MetricChoice::BitsPerByte;
  const std::string metric = metric_choice_name(choice);
  table.columns.push_back(Column::score_of(task, metric, bpb));
  if (!reported.count(metric)) {
    table.notes.push_back(fmt::format("{} reports no {}: shown as missing", task, metric));
  }
}

// Columns: per task perplexity first (lower is better), then the accuracy lm-eval papers print
// (or the one gold-signal column of --metric logprob | bits_per_byte); then the diagnostic
// columns. Facts the renderers must print go to table.notes.
void add_columns(ResultTable& table, const std::vector<std::string>& tasks, MetricChoice choice,
                 const StoredValues& stored) {
  for (const std::string& t : tasks) {
    const auto& m = stored.task_metrics.at(t);
    if (choice == MetricChoice::Logprob || choice == MetricChoice::BitsPerByte) {
      add_gold_column(table, t, choice, m);
      continue;
    }
    size_t before = table.columns.size();
    if (m.count("word_perplexity")) {
      table.columns.push_back(Column::score_of(t, "word_perplexity", true));
    } else if (m.count("perplexity")) {
      table.columns.push_back(Column::score_of(t, "perplexity", true));
    }
    bool has_acc = m.count("acc") || m.count("acc_norm");
    if (has_acc) {
      std::string metric = choice == MetricChoice::Acc       ? "acc"
                           : choice == MetricChoice::AccNorm ? "acc_norm"
                           : m.count("acc_norm")             ? "acc_norm"
                                                             : "acc";
      table.columns.push_back(Column::accuracy_of(t, metric));
      if (!m.count(metric)) {
        table.notes.push_back(fmt::format("{} reports no {}: shown as missing", t, metric));
      }
    }
    if (table.columns.size() == before) {
      table.notes.push_back(fmt::format("{}: no accuracy or perplexity metric (has {})", t,
                                        join(std::vector<std::string>(m.begin(), m.end()))));
    }
  }
  for (const char* d : kDiagnostics) {
    if (stored.diagnostics_present.count(d)) table.columns.push_back(Column::diagnostic_of(d));
  }
  if (stored.diagnostics_present.count("sink_mass")) add_uniform_reference(table, stored.sink_windows);
  add_measurement_note(table, stored);
  for (const Column& c : table.columns) table.has_avg = table.has_avg || c.in_average;
}

// Rows: runs grouped by the row keys, in the order their first run was created.
std::vector<RowRuns> add_rows(ResultTable& table, const std::vector<SweepRun>& runs) {
  std::map<std::vector<std::string>, size_t> row_of;
  std::vector<RowRuns> out;
  for (const SweepRun& r : runs) {
    std::vector<std::string> k;
    for (const auto& key : table.row_keys) k.push_back(param_of(r, key));
    auto [it, added] = row_of.emplace(k, table.rows.size());
    if (added) {
      table.rows.push_back(Row{k, 0, {}, {}, std::nullopt, "", false});
      out.emplace_back();
    }
    if (r.status == RunStatus::Finished) {
      out[it->second].finished.push_back(&r);
    } else {
      ++out[it->second].unfinished[to_string(r.status)];
    }
  }
  return out;
}

}  // namespace

Column Column::accuracy_of(const std::string& task, const std::string& metric) {
  Column c;
  c.task = task;
  c.metric = metric;
  c.accuracy = true;
  c.in_average = is_paper_task(task);
  return c;
}

Column Column::score_of(const std::string& task, const std::string& metric, bool lower_is_better) {
  Column c;
  c.task = task;
  c.metric = metric;
  c.lower_is_better = lower_is_better;
  return c;
}

Column Column::diagnostic_of(const std::string& stat) {
  Column c;
  c.task = "attention";
  c.metric = stat;
  c.diagnostic = true;
  return c;
}

Column Column::average() {
  Column c;
  c.accuracy = true;
  return c;
}

std::vector<std::string> metric_choice_names() {
  return std::vector<std::string>(std::begin(kMetricChoices), std::end(kMetricChoices));
}

MetricChoice parse_metric_choice(const std::string& s) {
  const std::vector<std::string> names = metric_choice_names();
  auto it = std::find(names.begin(), names.end(), s);
  if (it != names.end()) return static_cast<MetricChoice>(it - names.begin());
  throw UsageError("--metric: unknown choice '" + s + "'" + did_you_mean(s, names) +
                   "; valid: " + join(names));
}

ResultTable build_table(Db& db, const TableRequest& req) {
  check_request(db, req);
  std::vector<SweepRun> runs = select_runs(db, req);
  if (runs.empty()) {
    throw UsageError(std::string("no runs") + (req.where.empty() ? "" : " matching --where") +
                     " in " + members(req).what);
  }
  ResultTable table;
  table.sweep = req.runs.empty() ? req.sweep : "";
  table.runs = req.runs;
  table.metric_choice = metric_choice_name(req.metric);
  table.row_keys = req.rows.empty() ? default_rows(runs) : req.rows;

  const StoredValues stored = load_values(db, members(req), runs);
  add_columns(table, table_tasks(req, stored), req.metric, stored);
  int accuracy_columns = 0;
  for (const Column& c : table.columns) accuracy_columns += c.in_average;

  const std::vector<RowRuns> row_runs = add_rows(table, runs);
  for (size_t ri = 0; ri < table.rows.size(); ++ri) {
    fill_row(table.rows[ri], row_runs[ri], table.columns, stored, accuracy_columns);
  }
  for (size_t c = 0; c < table.columns.size(); ++c) {
    if (!table.columns[c].diagnostic) mark_best(table.rows, c, table.columns[c]);
  }
  mark_other_scoring(table, row_runs, stored);
  return table;
}

}  // namespace attnbench::results
