#include "results/schema.h"

#include <set>
#include <stdexcept>

#include "core/common/error.h"
#include "results/sqlite.h"

namespace attnbench::results {

namespace {

// Version 1: the tables of docs/results.md, "Schema (version 1)". Notes on choices:
// - A run may belong to several sweeps (its id is the hash of its config, so two sweeps that share
//   a cell share the run): runs.sweep/cell name the sweep that created it, sweep_runs holds every
//   membership, and tables are built from sweep_runs.
// - metrics.value is NULL for a non-finite value (SQLite stores NaN as NULL): a diverged loss.
// - evals keeps a rowid so that tasks can be listed in the order they were first recorded.
// - Timestamps are ISO 8601 UTC text (readable in `results sql`); heartbeat and metric times are
//   Unix seconds (arithmetic).
const char* kSchemaV1 = R"sql(
CREATE TABLE sweeps (
  name    TEXT PRIMARY KEY,
  file    TEXT NOT NULL DEFAULT '',
  created TEXT NOT NULL
);
CREATE TABLE runs (
  id       TEXT PRIMARY KEY,
  sweep    TEXT REFERENCES sweeps(name),
  cell     TEXT NOT NULL DEFAULT '',
  status   TEXT NOT NULL CHECK (status IN
             ('pending', 'running', 'finished', 'failed', 'diverged', 'interrupted')),
  config   TEXT NOT NULL,
  created  TEXT NOT NULL,
  started  TEXT,
  finished TEXT,
  error    TEXT,
  git_revision      TEXT,
  host              TEXT,
  device            TEXT,
  blas              TEXT,
  threads           INTEGER,
  attnbench_version TEXT,
  torch_version     TEXT,
  owner_host TEXT,
  owner_pid  INTEGER,
  heartbeat  REAL,
  attempts   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_status ON runs(status);
CREATE TABLE sweep_runs (
  sweep TEXT NOT NULL REFERENCES sweeps(name) ON DELETE CASCADE,
  run   TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  cell  TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (sweep, run)
) WITHOUT ROWID;
CREATE INDEX sweep_runs_run ON sweep_runs(run);
CREATE TABLE params (
  run   TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  key   TEXT NOT NULL,
  value TEXT NOT NULL,
  type  TEXT NOT NULL CHECK (type IN ('bool', 'int', 'float', 'string')),
  PRIMARY KEY (run, key)
) WITHOUT ROWID;
CREATE INDEX params_key ON params(key, value);
CREATE TABLE metrics (
  run   TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  key   TEXT NOT NULL,
  step  INTEGER NOT NULL,
  value REAL,
  time  REAL NOT NULL,
  PRIMARY KEY (run, key, step)
) WITHOUT ROWID;
CREATE TABLE evals (
  run    TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  task   TEXT NOT NULL,
  metric TEXT NOT NULL,
  value  REAL,
  stderr REAL,
  n      INTEGER NOT NULL,
  item_limit       INTEGER NOT NULL DEFAULT 0,
  protocol_version TEXT NOT NULL DEFAULT '',
  bos              TEXT NOT NULL DEFAULT '',
  time   REAL NOT NULL,
  UNIQUE (run, task, metric)
);
CREATE TABLE attn_stats (
  run   TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  layer INTEGER NOT NULL,
  head  INTEGER NOT NULL,
  stat  TEXT NOT NULL,
  idx   INTEGER NOT NULL DEFAULT -1,
  value REAL,
  PRIMARY KEY (run, layer, head, stat, idx)
) WITHOUT ROWID;
CREATE TABLE samples (
  run     TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  task    TEXT NOT NULL,
  doc     INTEGER NOT NULL,
  request INTEGER NOT NULL,
  loglikelihood REAL,
  is_greedy INTEGER NOT NULL,
  is_gold   INTEGER NOT NULL,
  tokens    INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (run, task, doc, request)
) WITHOUT ROWID;
)sql";

// What version 1 measured (docs/diagnostics.md as of that version): every other statistic in a
// version-1 database is a variant's learned one. Frozen: the history of a released layout.
const char* kV1Measured =
    "'sink_mass', 'sink_rate', 'sparsity', 'entropy', 'row_mass_mean', 'row_mass_min', "
    "'row_mass_max', 'zero_rows', 'fixed_token_mass', 'sink_threshold', 'tokens', "
    "'nonzero_ratio', 'sink_k', 'alpha_k', 'alpha_k_uniform', 'sink_k_window', 'sink_k_epsilon', "
    "'sink_mass_uniform', 'massive_activations', 'top_activation', 'median_activation', "
    "'kurtosis', 'mean_cosine', 'effective_rank'";

std::string v1_learned_sql() { return std::string("(stat NOT IN (") + kV1Measured + "))"; }

// Version 2: each attention statistic says whether it is measured or learned (AttnStat::learned),
// so that no list of measured names decides how a new statistic is drawn.
std::string schema_v2() {
  return "ALTER TABLE attn_stats ADD COLUMN learned INTEGER NOT NULL DEFAULT 0;\n"
         "UPDATE attn_stats SET learned = " + v1_learned_sql() + ";\n";
}

}  // namespace

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> all = [] {
    Migration v1;
    v1.version = 1;
    v1.description = "sweeps, runs, sweep_runs, params, metrics, evals, attn_stats, samples";
    v1.sql = kSchemaV1;
    v1.tables = {"sweeps", "runs", "sweep_runs", "params", "metrics", "evals", "attn_stats",
                 "samples"};
    Migration v2;
    v2.version = 2;
    v2.description = "attn_stats.learned: measured or learned";
    v2.sql = schema_v2();
    v2.columns = {"attn_stats.learned"};
    Migration v3;
    v3.version = 3;
    v3.description = "samples.choice_chars: acc_norm's denominator per choice";
    v3.sql = "ALTER TABLE samples ADD COLUMN choice_chars INTEGER;\n";
    v3.columns = {"samples.choice_chars"};
    Migration v4;
    v4.version = 4;
    v4.description = "attn_measurements: how each run's attention statistics were measured";
    v4.sql =
        "CREATE TABLE attn_measurements (\n"
        "  run    TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,\n"
        "  window INTEGER NOT NULL,\n"
        "  tokens INTEGER NOT NULL,\n"
        "  text   TEXT NOT NULL,\n"
        "  detail TEXT NOT NULL DEFAULT '',\n"
        "  time   REAL NOT NULL\n"
        ") WITHOUT ROWID;\n";
    v4.tables = {"attn_measurements"};
    return std::vector<Migration>{v1, v2, v3, v4};
  }();
  return all;
}

int current_schema_version() { return migrations().back().version; }

namespace {

int user_version(Db& db) {
  Stmt s = db.prepare("PRAGMA user_version");
  s.step();
  return static_cast<int>(s.integer(0));
}

std::set<std::string> table_names(Db& db) {
  Stmt s = db.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  std::set<std::string> names;
  while (s.step()) names.insert(s.text(0));
  return names;
}

// "table.column" for every column of the database's tables.
std::set<std::string> column_names(Db& db, const std::set<std::string>& tables) {
  std::set<std::string> columns;
  for (const std::string& t : tables) {
    Stmt s = db.prepare("SELECT name FROM pragma_table_info(?)");
    s.bind(1, t);
    while (s.step()) columns.insert(t + "." + s.text(0));
  }
  return columns;
}

std::vector<std::string> ours() {
  std::vector<std::string> all;
  for (const Migration& m : migrations()) all.insert(all.end(), m.tables.begin(), m.tables.end());
  return all;
}

[[noreturn]] void refuse_newer(Db& db, int version) {
  throw std::runtime_error(db.path().string() + " has results schema version " +
                           std::to_string(version) + ", newer than this attnbench knows (" +
                           std::to_string(current_schema_version()) +
                           "): use a newer attnbench to read it");
}

[[noreturn]] void refuse_foreign(Db& db, const std::set<std::string>& tables,
                                 const std::vector<std::string>& missing) {
  const std::vector<std::string> present(tables.begin(), tables.end());
  bool some_ours = false;
  for (const std::string& t : ours()) some_ours = some_ours || tables.count(t) > 0;
  throw InputError({db.path().string()},
                   std::string(some_ours ? "not a complete attnbench results database"
                                         : "not an attnbench results database") +
                       ": it holds table(s) " + join(present) + " and lacks " + join(missing) +
                       "; pass a results database, or a path that does not exist yet to create one");
}

}  // namespace

SchemaState inspect_schema(Db& db) {
  const int recorded = user_version(db);
  const std::set<std::string> tables = table_names(db);
  if (recorded > current_schema_version()) {
    if (!tables.count("runs")) refuse_foreign(db, tables, {"runs"});
    refuse_newer(db, recorded);
  }
  // The highest version whose steps' tables and columns are all present (a .dump restore keeps
  // them).
  const std::set<std::string> columns = column_names(db, tables);
  int recognised = 0;
  std::vector<std::string> missing;
  for (const Migration& m : migrations()) {
    for (const std::string& t : m.tables) {
      if (!tables.count(t)) missing.push_back(t);
    }
    if (!missing.empty()) break;
    for (const std::string& c : m.columns) {
      if (!columns.count(c)) missing.push_back(c);
    }
    if (!missing.empty()) break;  // an older version, migrated when next opened for writing
    recognised = m.version;
  }
  if (recorded > 0 && recognised < recorded) refuse_foreign(db, tables, missing);
  if (recorded > 0) return {recorded, true};
  if (tables.empty()) return {0, true};
  if (recognised == 0) refuse_foreign(db, tables, missing);
  return {recognised, false};
}

int schema_version(Db& db) { return inspect_schema(db).version; }

void migrate(Db& db) {
  SchemaState state = inspect_schema(db);
  if (state.version == current_schema_version() && state.recorded) return;  // no write lock
  Transaction tx(db);
  state = inspect_schema(db);  // re-read under the lock: another process may have migrated
  for (const Migration& m : migrations()) {
    if (m.version > state.version) db.exec(m.sql);
  }
  // user_version takes no bound parameter; the value is our own integer. This also records the
  // version of a database recognised by its tables.
  db.exec("PRAGMA user_version = " + std::to_string(current_schema_version()));
  tx.commit();
}

void require_current_schema(Db& db) {
  const int version = inspect_schema(db).version;
  if (version == 0) {
    throw InputError({db.path().string()},
                     "an empty database, not an attnbench results database (no tables): pass the "
                     "results database (--db PATH or ATTNBENCH_DB)");
  }
}

std::string attn_stats_learned_sql(Db& db) {
  return schema_version(db) >= 2 ? "learned" : v1_learned_sql();
}

std::string samples_choice_chars_sql(Db& db) { return schema_version(db) >= 3 ? "choice_chars" : "NULL"; }

}  // namespace attnbench::results
