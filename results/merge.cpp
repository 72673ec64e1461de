#include "results/merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <string>

#include "core/common/error.h"
#include "results/schema.h"
#include "results/sqlite.h"
#include "results/store.h"

namespace attnbench::results {

namespace {

const char* kRunColumns =
    "id, sweep, cell, status, config, created, started, finished, error, git_revision, host, "
    "device, blas, threads, attnbench_version, torch_version, owner_host, owner_pid, heartbeat, "
    "attempts";

// One kind of per-run row: its natural key (run first), its other columns, and the order in which
// an input's rows are copied (evals keep their recorded order: the table's task order follows it).
struct RowKind {
  const char* table;
  std::vector<std::string> key;
  std::vector<std::string> values;
  const char* order;
};
const RowKind kMetrics{"metrics", {"run", "key", "step"}, {"value", "time"}, "key, step"};
const RowKind kEvals{"evals",
                     {"run", "task", "metric"},
                     {"value", "stderr", "n", "item_limit", "protocol_version", "bos", "time"},
                     "rowid"};
const RowKind kAttnStats{"attn_stats",
                         {"run", "layer", "head", "stat", "idx"},
                         {"value", "learned"},
                         "layer, head, stat, idx"};
const RowKind kAttnMeasurements{"attn_measurements",
                                {"run"},
                                {"window", "tokens", "text", "detail", "time"},
                                "run"};
const RowKind kSamples{"samples",
                       {"run", "task", "doc", "request"},
                       {"loglikelihood", "is_greedy", "is_gold", "tokens", "choice_chars"},
                       "task, doc, request"};

// Decides a conflict between an input row (its key columns, then its values) and OUT's row with
// the same key (its values only): true when the input's row replaces OUT's.
using InputWins = std::function<bool(const Stmt& in, const Stmt& out)>;

std::string joined(const std::vector<std::string>& names, const std::string& suffix,
                   const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i ? sep : "") + names[i] + suffix;
  return s;
}

std::string placeholders(size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += i ? ", ?" : "?";
  return s;
}

// The column's position among the kind's values (the caller's own constant names).
int value_at(const RowKind& kind, const std::string& name) {
  return static_cast<int>(std::find(kind.values.begin(), kind.values.end(), name) - kind.values.begin());
}

// Copies the input's rows of `kind` for `run` into OUT: a key OUT lacks is added, a conflict is
// decided by input_wins, an identical row is kept. OUT's other rows are never touched. `in_sql`
// reads a column of an older input that lacks it (results/schema.h).
MergeCounts merge_rows(Db& out, Db& in, const RowKind& kind, const std::string& run,
                       const InputWins& input_wins,
                       const std::map<std::string, std::string>& in_sql = {}) {
  std::vector<std::string> all = kind.key;
  all.insert(all.end(), kind.values.begin(), kind.values.end());
  const int nk = static_cast<int>(kind.key.size()), nv = static_cast<int>(kind.values.size());
  const std::string table = kind.table;
  std::vector<std::string> read = all;
  for (std::string& column : read) {
    if (auto it = in_sql.find(column); it != in_sql.end()) column = it->second;
  }
  Stmt sel = in.prepare("SELECT " + joined(read, "", ", ") + " FROM " + table +
                        " WHERE run = ? ORDER BY " + kind.order);
  sel.bind(1, run);
  Stmt find = out.prepare("SELECT " + joined(kind.values, "", ", ") + " FROM " + table +
                          " WHERE " + joined(kind.key, " = ?", " AND "));
  Stmt insert = out.prepare("INSERT INTO " + table + "(" + joined(all, "", ", ") + ") VALUES (" +
                            placeholders(all.size()) + ")");
  Stmt update = out.prepare("UPDATE " + table + " SET " + joined(kind.values, " = ?", ", ") +
                            " WHERE " + joined(kind.key, " = ?", " AND "));
  MergeCounts counts;
  while (sel.step()) {
    for (int k = 0; k < nk; ++k) find.bind_column(k + 1, sel, k);
    const bool exists = find.step();
    bool identical = exists;
    for (int v = 0; exists && v < nv; ++v) identical = identical && sel.same_value(nk + v, find, v);
    const bool replace = exists && !identical && input_wins(sel, find);
    find.reset();
    if (!exists) {
      for (int c = 0; c < nk + nv; ++c) insert.bind_column(c + 1, sel, c);
      insert.run();
      insert.reset();
      ++counts.added;
    } else if (replace) {
      for (int v = 0; v < nv; ++v) update.bind_column(v + 1, sel, nk + v);
      for (int k = 0; k < nk; ++k) update.bind_column(nv + k + 1, sel, k);
      update.run();
      update.reset();
      ++counts.replaced;
    } else {
      ++counts.kept;
    }
  }
  return counts;
}

// Two evaluations of one (run, task, metric) with another identity (item limit, protocol, BOS)
// are different measurements: neither replaces the other (results/store.h), so the input is
// refused, naming both. `i`: the input's row (key columns first), `o`: OUT's values.
void refuse_other_measurement(Db& in, const std::string& run, const Stmt& i, const Stmt& o) {
  const int nk = static_cast<int>(kEvals.key.size());
  bool same = true;
  for (const char* column : {"item_limit", "protocol_version", "bos"}) {
    same = same && i.same_value(nk + value_at(kEvals, column), o, value_at(kEvals, column));
  }
  if (same) return;
  auto identity = [&](const Stmt& s, int offset) {
    return eval_identity(s.integer(offset + value_at(kEvals, "item_limit")),
                         s.text(offset + value_at(kEvals, "protocol_version")),
                         s.text(offset + value_at(kEvals, "bos")));
  };
  throw UsageError(fmt::format(
      "{}: run {} holds {} {} scored with {}, the output database with {}: two different "
      "measurements of one task, and a merge replaces neither; merge into another database",
      in.path().string(), run, i.text(1), i.text(2), identity(i, nk), identity(o, 0)));
}

void add(MergeCounts& total, const MergeCounts& c) {
  total.added += c.added;
  total.replaced += c.replaced;
  total.kept += c.kept;
}

// finished > diverged > failed > interrupted > running > pending: the more final result wins.
int rank(const std::string& status) {
  static const std::map<std::string, int> ranks = {{"pending", 0},  {"running", 1},
                                                   {"interrupted", 2}, {"failed", 3},
                                                   {"diverged", 4}, {"finished", 5}};
  auto it = ranks.find(status);
  return it == ranks.end() ? -1 : it->second;
}

// True when the input's copy (status, finished) beats OUT's.
bool input_wins(const std::string& in_status, const std::string& in_finished,
                const std::string& out_status, const std::string& out_finished) {
  if (rank(in_status) != rank(out_status)) return rank(in_status) > rank(out_status);
  // Same status: the earlier finish wins (the first complete result); ISO 8601 sorts as text.
  if (!in_finished.empty() && !out_finished.empty()) return in_finished < out_finished;
  return false;  // otherwise keep OUT's copy: merging twice changes nothing
}

// Each task's latest evaluation time for `run` (what decides whose samples of the task win).
std::map<std::string, double> eval_times(Db& db, const std::string& run) {
  Stmt s = db.prepare("SELECT task, max(time) FROM evals WHERE run = ? GROUP BY task");
  s.bind(1, run);
  std::map<std::string, double> times;
  while (s.step()) times[s.text(0)] = s.real(1);
  return times;
}

std::string run_upsert() {
  std::vector<std::string> columns;
  std::istringstream list(kRunColumns);
  for (std::string c; std::getline(list, c, ',');) columns.push_back(c.substr(c.find_first_not_of(' ')));
  std::string sql = std::string("INSERT INTO runs(") + kRunColumns + ") VALUES (" +
                    placeholders(columns.size()) + ") ON CONFLICT(id) DO UPDATE SET ";
  for (size_t i = 1; i < columns.size(); ++i) {  // every column but the id (the first)
    sql += (i > 1 ? ", " : "") + columns[i] + " = excluded." + columns[i];
  }
  return sql;
}

// The run row and its params, as one unit (the params are the flattened `runs.config`): the
// input's copy is written when OUT lacks the run or the input's copy wins. Returns which happened.
enum class RunOutcome { Added, Replaced, Kept };
RunOutcome merge_run_row(Db& out, Db& in, Stmt& run) {
  const std::string id = run.text(0);
  Stmt existing = out.prepare("SELECT status, COALESCE(finished, '') FROM runs WHERE id = ?");
  existing.bind(1, id);
  const bool exists = existing.step();
  if (exists && !input_wins(run.text(3), run.text(7), existing.text(0), existing.text(1))) {
    return RunOutcome::Kept;
  }
  Stmt write = out.prepare(run_upsert());
  for (int c = 0; c < run.columns(); ++c) write.bind_column(c + 1, run, c);
  write.run();
  out.prepare("DELETE FROM params WHERE run = ?").bind(1, id).run();
  Stmt sel = in.prepare("SELECT run, key, value, type FROM params WHERE run = ? ORDER BY key");
  sel.bind(1, id);
  Stmt ins = out.prepare("INSERT INTO params(run, key, value, type) VALUES (?, ?, ?, ?)");
  while (sel.step()) {
    for (int c = 0; c < 4; ++c) ins.bind_column(c + 1, sel, c);
    ins.run();
    ins.reset();
  }
  return exists ? RunOutcome::Replaced : RunOutcome::Added;
}

// How to read the columns an older input lacks (results/schema.h), read once per input.
struct InputColumns {
  std::string learned;       // attn_stats.learned (attn_stats_learned_sql)
  std::string choice_chars;  // samples.choice_chars (samples_choice_chars_sql)
  bool measurements = false;  // attn_measurements (schema version 4)
};

// A run's attention statistics measured otherwise in the input than in OUT (window, tokens, text)
// are two measurements: neither replaces the other, so the input is refused, naming both.
void refuse_other_attn_measurement(Db& in, const std::string& run, const Stmt& i, const Stmt& o) {
  auto read = [](const Stmt& s, int offset) {
    AttnMeasurement m;
    m.window = s.integer(offset + value_at(kAttnMeasurements, "window"));
    m.tokens = s.integer(offset + value_at(kAttnMeasurements, "tokens"));
    m.text = s.text(offset + value_at(kAttnMeasurements, "text"));
    return m;
  };
  const AttnMeasurement mine = read(i, static_cast<int>(kAttnMeasurements.key.size())), theirs = read(o, 0);
  if (mine.same_as(theirs)) return;
  throw UsageError(fmt::format(
      "{}: run {} holds attention statistics measured on {}, the output database on {}: two "
      "different measurements, and a merge replaces neither; merge into another database",
      in.path().string(), run, mine.describe(), theirs.describe()));
}

// Merges one run: its row and params, then every per-run row kind under its own rule.
void merge_run(Db& out, Db& in, Stmt& run, const InputColumns& columns, MergeSummary& summary) {
  const std::string id = run.text(0);
  const std::map<std::string, double> in_evals = eval_times(in, id), out_evals = eval_times(out, id);
  const RunOutcome outcome = merge_run_row(out, in, run);
  ++(outcome == RunOutcome::Added ? summary.runs.added
     : outcome == RunOutcome::Replaced ? summary.runs.replaced : summary.runs.kept);
  const bool run_won = outcome != RunOutcome::Kept;

  const int nk_m = static_cast<int>(kMetrics.key.size()), m_time = value_at(kMetrics, "time");
  add(summary.metrics, merge_rows(out, in, kMetrics, id, [&](const Stmt& i, const Stmt& o) {
        return i.real(nk_m + m_time) > o.real(m_time);
      }));
  const int nk_e = static_cast<int>(kEvals.key.size());
  const int e_time = value_at(kEvals, "time"), e_n = value_at(kEvals, "n");
  add(summary.evals, merge_rows(out, in, kEvals, id, [&](const Stmt& i, const Stmt& o) {
        refuse_other_measurement(in, id, i, o);
        if (i.real(nk_e + e_time) != o.real(e_time)) return i.real(nk_e + e_time) > o.real(e_time);
        return i.integer(nk_e + e_n) > o.integer(e_n);
      }));
  if (columns.measurements) {  // counted with the statistics they describe
    add(summary.attn_stats, merge_rows(out, in, kAttnMeasurements, id, [&](const Stmt& i, const Stmt& o) {
          refuse_other_attn_measurement(in, id, i, o);
          return run_won;
        }));
  }
  add(summary.attn_stats,
      merge_rows(
          out, in, kAttnStats, id, [&](const Stmt&, const Stmt&) { return run_won; },
          {{"learned", columns.learned}}));
  auto time_of = [](const std::map<std::string, double>& times, const std::string& task) {
    auto it = times.find(task);
    return it == times.end() ? -std::numeric_limits<double>::infinity() : it->second;
  };
  add(summary.samples, merge_rows(
                           out, in, kSamples, id,
                           [&](const Stmt& i, const Stmt&) {
                             return time_of(in_evals, i.text(1)) > time_of(out_evals, i.text(1));
                           },
                           {{"choice_chars", columns.choice_chars}}));
}

void merge_one(Db& out, const std::filesystem::path& in_path, MergeSummary& summary) {
  Db in(in_path, /*read_only=*/true);
  require_current_schema(in);
  Transaction tx(out);

  // Sweeps: the union; an empty file name is filled in, the earliest creation time kept.
  {
    Stmt sel = in.prepare("SELECT name, file, created FROM sweeps ORDER BY name");
    Stmt ins = out.prepare(
        "INSERT INTO sweeps(name, file, created) VALUES (?, ?, ?) ON CONFLICT(name) DO UPDATE SET "
        "file = CASE WHEN sweeps.file = '' THEN excluded.file ELSE sweeps.file END, "
        "created = min(sweeps.created, excluded.created)");
    while (sel.step()) {
      for (int c = 0; c < 3; ++c) ins.bind_column(c + 1, sel, c);
      ins.run();
      ins.reset();
    }
  }
  Stmt runs = in.prepare(std::string("SELECT ") + kRunColumns + " FROM runs ORDER BY id");
  InputColumns columns;  // the input's schema, read once
  columns.learned = attn_stats_learned_sql(in);
  columns.choice_chars = samples_choice_chars_sql(in);
  columns.measurements = schema_version(in) >= 4;
  while (runs.step()) merge_run(out, in, runs, columns, summary);

  // Memberships: the union (a membership has no value to replace).
  {
    Stmt sel = in.prepare("SELECT sweep, run, cell FROM sweep_runs ORDER BY sweep, run");
    Stmt ins = out.prepare("INSERT INTO sweep_runs(sweep, run, cell) VALUES (?, ?, ?) "
                           "ON CONFLICT(sweep, run) DO NOTHING");
    while (sel.step()) {
      for (int c = 0; c < 3; ++c) ins.bind_column(c + 1, sel, c);
      ins.run();
      ins.reset();
      ++(out.changes() > 0 ? summary.memberships.added : summary.memberships.kept);
    }
  }
  tx.commit();
}

}  // namespace

MergeSummary merge_databases(const std::filesystem::path& out,
                             const std::vector<std::filesystem::path>& inputs) {
  for (const auto& in : inputs) {
    if (!std::filesystem::exists(in)) throw UsageError("results merge: no database at " + in.string());
    if (std::filesystem::exists(out) && std::filesystem::equivalent(in, out)) {
      throw UsageError("results merge: input " + in.string() + " is the output itself");
    }
  }
  // Every input is checked before OUT is opened: a bad input fails before anything is written.
  for (const auto& in : inputs) {
    Db db(in, /*read_only=*/true);
    require_current_schema(db);
  }
  Store store = Store::open(out);
  MergeSummary summary;
  for (const auto& in : inputs) merge_one(store.db(), in, summary);
  return summary;
}

}  // namespace attnbench::results
