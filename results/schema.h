// The store's schema and its forward migrations (docs/results.md). The schema version lives in
// PRAGMA user_version: 0 = empty file, N = migrations 1..N applied. A new schema version is one new
// entry appended to the list in schema.cpp; entries are never edited once released, so that every
// older database upgrades by replaying the steps it has not seen.
//
// user_version is in the file's header, which a `sqlite3 old.db .dump | sqlite3 new.db` restore
// does not carry: a database with user_version 0 whose tables are all those of migrations 1..N is
// recognised as version N (and stamped when it is next opened for writing). A file holding other
// tables and not ours is not an attnbench database and is refused, never written into.
#pragma once
#include <string>
#include <vector>

namespace attnbench::results {

class Db;

struct Migration {
  int version;            // user_version after this step
  std::string description;
  std::string sql;        // one or more statements
  // How the step is recognised in a database that lost its user_version: the tables it creates
  // and the columns ("table.column") it adds.
  std::vector<std::string> tables;
  std::vector<std::string> columns;
};

const std::vector<Migration>& migrations();
int current_schema_version();  // the last migration's version

struct SchemaState {
  int version = 0;       // 0 = an empty database (no tables at all)
  bool recorded = true;  // false: recognised by its tables, user_version lost (a .dump restore)
};

// What the file holds. Throws InputError naming the file and its tables when it is not an
// attnbench results database (another application's tables, or some of ours missing), and a
// runtime_error naming both versions when it is newer than this code knows.
SchemaState inspect_schema(Db& db);
int schema_version(Db& db);  // inspect_schema(db).version

// Applies every migration newer than the database's version and records the version, all in one
// IMMEDIATE transaction (two processes opening a fresh file at once cannot both create it).
void migrate(Db& db);

// Throws unless the database holds attnbench results of a version this code reads (every version
// up to the current one: read-only connections cannot migrate, and read the older layouts as
// they are): InputError for an empty file.
void require_current_schema(Db& db);

// attn_stats' learned flag as an SQL expression over its columns: the column from version 2 on; in
// a version-1 database, which did not record it, every statistic version 1 did not measure.
std::string attn_stats_learned_sql(Db& db);
// The SQL expression for samples.choice_chars in `db`: the column from version 3 on, NULL before
// (no acc_norm denominators were stored: acc_norm is then tested over seeds only).
std::string samples_choice_chars_sql(Db& db);

}  // namespace attnbench::results
