#include "results/merge.h"

#include <map>
#include <string>

#include "core/common/error.h"
#include "results/schema.h"
#include "results/sqlite.h"
#include "results/store.h"

namespace attnbench::results {

namespace {

// Column lists of the tables copied per run (constants of this file, never user input).
struct ChildTable {
  const char* name;
  const char* columns;
  const char* order;  // evals keep their recorded order (the table's task order follows it)
};
const ChildTable kChildren[] = {
    {"params", "run, key, value, type", "key"},
    {"metrics", "run, key, step, value, time", "key, step"},
    {"evals", "run, task, metric, value, stderr, n, item_limit, protocol_version, bos, time", "rowid"},
    {"attn_stats", "run, layer, head, stat, idx, value", "layer, head, stat, idx"},
    {"samples", "run, task, doc, request, loglikelihood, is_greedy, is_gold, tokens", "task, doc, request"},
};
const char* kRunColumns =
    "id, sweep, cell, status, config, created, started, finished, error, git_revision, host, "
    "device, blas, threads, attnbench_version, torch_version, owner_host, owner_pid, heartbeat, "
    "attempts";

int count_columns(const std::string& list) {
  int n = 1;
  for (char c : list) n += c == ',';
  return n;
}

std::string placeholders(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += i ? ", ?" : "?";
  return s;
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

// Copies every row of `sql` (run from `src`) into `dst_sql` (its placeholders in the same order).
void copy_rows(Stmt& select, Stmt& insert) {
  while (select.step()) {
    for (int c = 0; c < select.columns(); ++c) insert.bind_column(c + 1, select, c);
    insert.run();
    insert.reset();
  }
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
    copy_rows(sel, ins);
  }

  // Runs: decide per run, then replace the loser's rows wholesale.
  std::string upsert = std::string("INSERT INTO runs(") + kRunColumns + ") VALUES (" +
                       placeholders(count_columns(kRunColumns)) + ") ON CONFLICT(id) DO UPDATE SET ";
  {
    std::string cols = kRunColumns;
    bool first = true;
    size_t start = 0;
    while (start < cols.size()) {
      size_t end = cols.find(',', start);
      std::string c = cols.substr(start, end == std::string::npos ? std::string::npos : end - start);
      while (!c.empty() && c.front() == ' ') c.erase(0, 1);
      if (c != "id") {
        upsert += (first ? "" : ", ") + c + " = excluded." + c;
        first = false;
      }
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  Stmt runs = in.prepare(std::string("SELECT ") + kRunColumns + " FROM runs ORDER BY id");
  Stmt existing = out.prepare("SELECT status, COALESCE(finished, '') FROM runs WHERE id = ?");
  Stmt write_run = out.prepare(upsert);
  while (runs.step()) {
    std::string id = runs.text(0), status = runs.text(3), finished = runs.text(7);
    existing.bind(1, id);
    bool exists = existing.step();
    bool take = !exists || input_wins(status, finished, existing.text(0), existing.text(1));
    existing.reset();
    if (!take) {
      ++summary.runs_kept;
      continue;
    }
    ++(exists ? summary.runs_replaced : summary.runs_added);
    for (int c = 0; c < runs.columns(); ++c) write_run.bind_column(c + 1, runs, c);
    write_run.run();
    write_run.reset();
    for (const ChildTable& t : kChildren) {
      out.prepare(std::string("DELETE FROM ") + t.name + " WHERE run = ?").bind(1, id).run();
      Stmt sel = in.prepare(std::string("SELECT ") + t.columns + " FROM " + t.name +
                            " WHERE run = ? ORDER BY " + t.order);
      sel.bind(1, id);
      Stmt ins = out.prepare(std::string("INSERT INTO ") + t.name + "(" + t.columns + ") VALUES (" +
                             placeholders(count_columns(t.columns)) + ")");
      copy_rows(sel, ins);
    }
  }

  // Memberships: the union.
  {
    Stmt sel = in.prepare("SELECT sweep, run, cell FROM sweep_runs ORDER BY sweep, run");
    Stmt ins = out.prepare("INSERT INTO sweep_runs(sweep, run, cell) VALUES (?, ?, ?) "
                           "ON CONFLICT(sweep, run) DO NOTHING");
    copy_rows(sel, ins);
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
  Store store = Store::open(out);
  MergeSummary summary;
  for (const auto& in : inputs) merge_one(store.db(), in, summary);
  return summary;
}

}  // namespace attnbench::results
