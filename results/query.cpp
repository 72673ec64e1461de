#include "results/query.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "core/common/error.h"
#include "results/paired.h"
#include "results/sqlite.h"

namespace attnbench::results {

namespace {

constexpr const char* kSeedKey = "train.seed";
constexpr const char* kVariantKey = "attention.variant";
constexpr const char* kPretrainedKey = "pretrained.name";

struct SweepRun {
  std::string id;
  RunStatus status;
  std::map<std::string, std::string> params;
};

struct EvalValue {
  std::optional<double> value;  // NULL (a non-finite value) counts as missing
  std::optional<double> std_error;
};

std::vector<std::string> sweep_names(Db& db) {
  Stmt s = db.prepare("SELECT name FROM sweeps ORDER BY name");
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.text(0));
  return out;
}

void require_sweep(Db& db, const std::string& sweep) {
  std::vector<std::string> names = sweep_names(db);
  if (std::find(names.begin(), names.end(), sweep) != names.end()) return;
  throw UsageError("no sweep '" + sweep + "' in " + db.path().string() + did_you_mean(sweep, names) +
                   (names.empty() ? "; it holds no sweeps" : "; sweeps: " + join(names)));
}

std::vector<std::string> sweep_param_keys(Db& db, const std::string& sweep) {
  Stmt s = db.prepare("SELECT DISTINCT p.key FROM params p JOIN sweep_runs sr ON sr.run = p.run "
                      "WHERE sr.sweep = ? ORDER BY p.key");
  s.bind(1, sweep);
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.text(0));
  return out;
}

// Column and key names from the user are only ever compared with names read from the store.
void require_key(const std::string& key, const std::vector<std::string>& keys, const char* option,
                 const std::string& sweep) {
  if (std::find(keys.begin(), keys.end(), key) != keys.end()) return;
  throw UsageError(std::string(option) + ": no param '" + key + "' in sweep '" + sweep + "'" +
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
  std::string sql =
      "SELECT r.id, r.status FROM sweep_runs sr JOIN runs r ON r.id = sr.run WHERE sr.sweep = ?";
  for (size_t i = 0; i < req.where.size(); ++i) {
    sql += " AND r.id IN (SELECT run FROM params WHERE key = ? AND (value = ? OR "
           "(type IN ('int', 'float') AND CAST(value AS REAL) = ?)))";
  }
  sql += " ORDER BY r.created, r.rowid";
  Stmt s = db.prepare(sql);
  int i = 1;
  s.bind(i++, req.sweep);
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
  Stmt p = db.prepare("SELECT p.run, p.key, p.value FROM params p JOIN sweep_runs sr "
                      "ON sr.run = p.run WHERE sr.sweep = ?");
  p.bind(1, req.sweep);
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

std::string status_note(const std::map<std::string, int>& unfinished) {
  if (unfinished.empty()) return "";
  std::vector<std::string> parts;
  for (const auto& [status, n] : unfinished) parts.push_back(fmt::format("{} {}", n, status));
  return join(parts) + ": not included";
}

// The stored values of the selected runs: evals (task, metric) and the model-level attention
// statistics (task "attention"), keyed by (run, task, metric).
struct StoredValues {
  std::map<std::tuple<std::string, std::string, std::string>, EvalValue> values;
  std::vector<std::string> task_order;  // tasks in the order they were first recorded
  std::map<std::string, std::set<std::string>> task_metrics;
  std::set<std::string> diagnostics_present;
};

// Model-level attention statistics (layer = head = -1, evals/diagnostics) shown as diagnostic
// columns: the first table a user sees shows how each variant allocates attention (sink, sparsity).
constexpr const char* kDiagnostics[] = {"sink_mass", "sparsity"};

// Every --where and --rows key must be a param of the sweep.
void check_request(Db& db, const TableRequest& req) {
  require_sweep(db, req.sweep);
  std::vector<std::string> keys = sweep_param_keys(db, req.sweep);
  for (const auto& w : req.where) require_key(w.first, keys, "--where", req.sweep);
  for (const auto& r : req.rows) require_key(r, keys, "--rows", req.sweep);
}

// The names of MetricChoice, in the enum's order.
const char* const kMetricChoices[] = {"auto", "acc", "acc_norm", "logprob", "bits_per_byte"};

std::string metric_choice_name(MetricChoice choice) { return kMetricChoices[static_cast<int>(choice)]; }

StoredValues load_values(Db& db, const std::string& sweep, const std::vector<SweepRun>& runs) {
  std::set<std::string> selected;
  for (const SweepRun& r : runs) selected.insert(r.id);
  StoredValues out;
  {
    Stmt s = db.prepare("SELECT e.run, e.task, e.metric, e.value, e.stderr FROM evals e "
                        "JOIN sweep_runs sr ON sr.run = e.run WHERE sr.sweep = ? ORDER BY e.rowid");
    s.bind(1, sweep);
    while (s.step()) {
      if (!selected.count(s.text(0))) continue;
      std::string task = s.text(1), metric = s.text(2);
      if (!out.task_metrics.count(task)) out.task_order.push_back(task);
      out.task_metrics[task].insert(metric);
      out.values[{s.text(0), task, metric}] = {s.optional_real(3), s.optional_real(4)};
    }
  }
  Stmt s = db.prepare("SELECT a.run, a.stat, a.value FROM attn_stats a JOIN sweep_runs sr ON "
                      "sr.run = a.run WHERE sr.sweep = ? AND a.layer = -1 AND a.head = -1 AND "
                      "a.idx = -1 AND a.stat IN ('sink_mass', 'sparsity')");
  s.bind(1, sweep);
  while (s.step()) {
    if (!selected.count(s.text(0))) continue;
    out.diagnostics_present.insert(s.text(1));
    out.values[{s.text(0), "attention", s.text(1)}] = {s.optional_real(2), std::nullopt};
  }
  return out;
}

// --tasks, or every evaluated task in recorded order; each must have evals.
std::vector<std::string> table_tasks(const TableRequest& req, const StoredValues& stored) {
  std::vector<std::string> tasks = req.tasks.empty() ? stored.task_order : req.tasks;
  for (const std::string& t : tasks) {
    if (!stored.task_metrics.count(t)) {
      throw UsageError("--tasks: no evals of task '" + t + "' in sweep '" + req.sweep + "'" +
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
  table.columns.push_back({task, metric, bpb, false});
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
      table.columns.push_back({t, "word_perplexity", true, false});
    } else if (m.count("perplexity")) {
      table.columns.push_back({t, "perplexity", true, false});
    }
    bool has_acc = m.count("acc") || m.count("acc_norm");
    if (has_acc) {
      std::string metric = choice == MetricChoice::Acc       ? "acc"
                           : choice == MetricChoice::AccNorm ? "acc_norm"
                           : m.count("acc_norm")             ? "acc_norm"
                                                             : "acc";
      table.columns.push_back({t, metric, false, true});
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
    if (stored.diagnostics_present.count(d)) table.columns.push_back({"attention", d, false, false, true});
  }
  for (const Column& c : table.columns) table.has_avg = table.has_avg || c.in_average;
}

// The runs of each row: finished ones (which the row's cells average) and counts of the others.
struct RowRuns {
  std::vector<const SweepRun*> finished;
  std::map<std::string, int> unfinished;  // status -> runs
};

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

// One cell: the mean and spread over the row's finished runs of the column's value. Adds each
// run's accuracy to run_sum / run_count, from which the row's per-run averages are made.
Cell column_cell(const Column& col, const std::vector<const SweepRun*>& finished,
                 const StoredValues& stored, std::vector<double>& run_sum,
                 std::vector<int>& run_count) {
  Cell cell;
  std::vector<double> values;
  double se_sq = 0;
  bool all_se = true;
  for (size_t k = 0; k < finished.size(); ++k) {
    auto it = stored.values.find({finished[k]->id, col.task, col.metric});
    if (it == stored.values.end() || !it->second.value) continue;
    values.push_back(*it->second.value);
    if (it->second.std_error) {
      se_sq += *it->second.std_error * *it->second.std_error;
    } else {
      all_se = false;
    }
    if (col.in_average) {
      run_sum[k] += *it->second.value;
      ++run_count[k];
    }
  }
  cell.n = static_cast<int>(values.size());
  if (cell.n > 0) {
    cell.mean = mean_of(values);
    cell.std = sample_std(values);
    if (all_se) cell.std_error = std::sqrt(se_sq) / cell.n;
  }
  return cell;
}

// A row's cells and its Avg over the accuracy columns.
void fill_row(Row& row, const RowRuns& runs, const std::vector<Column>& columns,
              const StoredValues& stored, int accuracy_columns) {
  row.n = static_cast<int>(runs.finished.size());
  for (const SweepRun* r : runs.finished) row.runs.push_back(r->id);
  row.note = status_note(runs.unfinished);
  // Per run: the sum of its accuracy columns, to give each run's own average when it has all.
  std::vector<double> run_sum(runs.finished.size(), 0.0);
  std::vector<int> run_count(runs.finished.size(), 0);
  AvgCell avg;
  avg.tasks_total = accuracy_columns;
  double sum_of_means = 0;
  for (const Column& col : columns) {
    Cell cell = column_cell(col, runs.finished, stored, run_sum, run_count);
    if (cell.n > 0 && col.in_average) {
      ++avg.tasks_present;
      sum_of_means += cell.mean;
    }
    row.cells.push_back(cell);
  }
  if (avg.tasks_present > 0) {
    avg.mean = sum_of_means / avg.tasks_present;
    std::vector<double> run_avgs;
    for (size_t k = 0; k < run_sum.size(); ++k) {
      if (run_count[k] == accuracy_columns) run_avgs.push_back(run_sum[k] / accuracy_columns);
    }
    // The spread of the average over seeds is only meaningful when every run has every task.
    if (avg.complete() && run_avgs.size() == runs.finished.size()) avg.std = sample_std(run_avgs);
    row.avg = avg;
  }
}

// The best row of column c, and the rows whose gap to it is inside the combined stderr.
void mark_best(std::vector<Row>& rows, size_t c, const Column& col) {
  std::optional<double> best;
  for (const Row& row : rows) {
    const Cell& cell = row.cells[c];
    if (cell.n == 0) continue;
    if (!best || (col.lower_is_better ? cell.mean < *best : cell.mean > *best)) best = cell.mean;
  }
  if (!best) return;
  std::vector<Cell*> best_cells;
  for (Row& row : rows) {
    if (row.cells[c].n > 0 && row.cells[c].mean == *best) {
      row.cells[c].best = true;
      best_cells.push_back(&row.cells[c]);
    }
  }
  for (Row& row : rows) {
    Cell& cell = row.cells[c];
    if (cell.n == 0 || cell.best || !cell.std_error) continue;
    for (const Cell* b : best_cells) {
      if (!b->std_error) continue;
      double combined = std::sqrt(*b->std_error * *b->std_error + *cell.std_error * *cell.std_error);
      if (std::abs(cell.mean - b->mean) <= combined) cell.within_std_error = true;
    }
  }
}

}  // namespace

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
    throw UsageError("sweep '" + req.sweep + "' has no runs" +
                     (req.where.empty() ? std::string() : " matching --where"));
  }
  ResultTable table;
  table.sweep = req.sweep;
  table.metric_choice = metric_choice_name(req.metric);
  table.row_keys = req.rows.empty() ? default_rows(runs) : req.rows;

  const StoredValues stored = load_values(db, req.sweep, runs);
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
  return table;
}

Grid runs_grid(Store& store, const RunFilter& filter) {
  Grid g;
  g.headers = {"id", "sweep", "cell", "status", "created", "started", "finished", "host", "error"};
  for (const RunInfo& r : store.runs(filter)) {
    auto opt = [](const std::string& s) { return s.empty() ? nlohmann::json() : nlohmann::json(s); };
    g.rows.push_back({r.id, opt(r.sweep), r.cell, to_string(r.status), r.created, opt(r.started),
                      opt(r.finished), opt(r.host), opt(r.error)});
  }
  return g;
}

std::string resolve_run_id(Db& db, const std::string& id) {
  if (id.empty()) throw UsageError("empty run id");
  // A prefix match without LIKE (whose wildcards would need escaping): compare the leading part.
  Stmt s = db.prepare("SELECT id FROM runs WHERE substr(id, 1, length(?1)) = ?1 ORDER BY id LIMIT 6");
  s.bind(1, id);
  std::vector<std::string> found;
  while (s.step()) found.push_back(s.text(0));
  if (found.size() == 1) return found[0];
  if (std::find(found.begin(), found.end(), id) != found.end()) return id;
  if (found.empty()) {
    throw UsageError("no run '" + id + "' in " + db.path().string() +
                     " (attnbench results runs lists them)");
  }
  throw UsageError("run id '" + id + "' is ambiguous: " + join(found) + (found.size() > 5 ? ", ..." : ""));
}

nlohmann::json show_run(Store& store, const std::string& id_in) {
  Db& db = store.db();
  std::string id = resolve_run_id(db, id_in);
  RunInfo r = *store.run(id);
  nlohmann::json j;
  j["id"] = r.id;
  j["status"] = to_string(r.status);
  j["sweep"] = r.sweep;
  j["cell"] = r.cell;
  {
    Stmt s = db.prepare("SELECT sweep, cell FROM sweep_runs WHERE run = ? ORDER BY sweep");
    s.bind(1, id);
    j["sweeps"] = nlohmann::json::array();
    while (s.step()) j["sweeps"].push_back({{"sweep", s.text(0)}, {"cell", s.text(1)}});
  }
  j["created"] = r.created;
  j["started"] = r.started;
  j["finished"] = r.finished;
  j["error"] = r.error;
  j["metadata"] = {{"git_revision", r.git_revision}, {"host", r.host},
                   {"device", r.device},             {"blas", r.blas},
                   {"threads", r.threads},           {"attnbench_version", r.attnbench_version},
                   {"torch_version", r.torch_version}};
  nlohmann::json config = nlohmann::json::parse(r.config_json, nullptr, false);
  j["config"] = config.is_discarded() ? nlohmann::json(r.config_json) : config;
  j["params"] = nlohmann::json::object();
  for (const Param& p : store.params(id)) j["params"][p.key] = p.value;
  j["final_metrics"] = nlohmann::json::object();
  {
    // The last logged step of each key.
    Stmt s = db.prepare("SELECT key, step, value FROM metrics m WHERE run = ?1 AND step = "
                        "(SELECT max(step) FROM metrics WHERE run = ?1 AND key = m.key) ORDER BY key");
    s.bind(1, id);
    while (s.step()) {
      j["final_metrics"][s.text(0)] = {{"step", s.integer(1)},
                                       {"value", s.is_null(2) ? nlohmann::json() : nlohmann::json(s.real(2))}};
    }
  }
  j["evals"] = nlohmann::json::array();
  for (const EvalRow& e : store.evals(id)) {
    j["evals"].push_back({{"task", e.task},
                          {"metric", e.metric},
                          {"value", e.value},
                          {"stderr", e.std_error ? nlohmann::json(*e.std_error) : nlohmann::json()},
                          {"n", e.n},
                          {"limit", e.limit},
                          {"protocol_version", e.protocol_version},
                          {"bos", e.bos}});
  }
  for (const char* table : {"attn_stats", "samples"}) {
    // The table name is one of two literals, never user input.
    Stmt s = db.prepare(std::string("SELECT count(*) FROM ") + table + " WHERE run = ?");
    s.bind(1, id);
    s.step();
    j[std::string(table) + "_count"] = s.integer(0);
  }
  return j;
}

std::string show_run_text(const nlohmann::json& j) {
  auto str = [](const nlohmann::json& v) {
    return v.is_string() ? v.get<std::string>() : v.is_null() ? std::string("—") : v.dump();
  };
  std::string out = fmt::format("run {}  status {}\n", str(j["id"]), str(j["status"]));
  for (const auto& m : j["sweeps"]) out += fmt::format("  sweep {}  cell {}\n", str(m["sweep"]), str(m["cell"]));
  for (const char* k : {"created", "started", "finished", "error"}) {
    if (!j[k].get<std::string>().empty()) out += fmt::format("  {:<9} {}\n", k, str(j[k]));
  }
  out += "metadata\n";
  for (const auto& [k, v] : j["metadata"].items()) out += fmt::format("  {:<18} {}\n", k, str(v));
  out += "params\n";
  for (const auto& [k, v] : j["params"].items()) out += fmt::format("  {} = {}\n", k, str(v));
  out += "final metrics\n";
  for (const auto& [k, v] : j["final_metrics"].items()) {
    out += fmt::format("  {:<18} {} (step {})\n", k, str(v["value"]), str(v["step"]));
  }
  out += "evals\n";
  for (const auto& e : j["evals"]) {
    out += fmt::format("  {:<16} {:<16} {}", str(e["task"]), str(e["metric"]), str(e["value"]));
    if (!e["stderr"].is_null()) out += fmt::format(" ± {}", str(e["stderr"]));
    out += fmt::format("  (n {}, limit {}, protocol {}, bos {})\n", str(e["n"]), str(e["limit"]),
                       str(e["protocol_version"]), str(e["bos"]));
  }
  out += fmt::format("attention statistics: {} rows; samples: {} rows\n",
                     str(j["attn_stats_count"]), str(j["samples_count"]));
  return out;
}

Grid curve_grid(Store& store, const std::string& id_in, const std::string& metric) {
  Db& db = store.db();
  std::string id = resolve_run_id(db, id_in);
  std::vector<std::string> keys;
  {
    Stmt s = db.prepare("SELECT DISTINCT key FROM metrics WHERE run = ? ORDER BY key");
    s.bind(1, id);
    while (s.step()) keys.push_back(s.text(0));
  }
  if (std::find(keys.begin(), keys.end(), metric) == keys.end()) {
    throw UsageError("--metric: run " + id + " has no metric '" + metric + "'" +
                     did_you_mean(metric, keys) +
                     (keys.empty() ? "; it has logged none" : "; it has: " + join(keys)));
  }
  Grid g;
  g.headers = {"step", metric, "time"};
  for (const Metric& m : store.metrics(id, metric)) {
    g.rows.push_back({m.step, std::isnan(m.value) ? nlohmann::json() : nlohmann::json(m.value), m.time});
  }
  return g;
}

}  // namespace attnbench::results
