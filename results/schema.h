// The store's schema and its forward migrations (docs/results.md). The schema version lives in
// PRAGMA user_version: 0 = empty file, N = migrations 1..N applied. A new schema version is one new
// entry appended to the list in schema.cpp; entries are never edited once released, so that every
// older database upgrades by replaying the steps it has not seen.
#pragma once
#include <string>
#include <vector>

namespace attnbench::results {

class Db;

struct Migration {
  int version;            // user_version after this step
  std::string description;
  std::string sql;        // one or more statements
};

const std::vector<Migration>& migrations();
int current_schema_version();  // the last migration's version

int schema_version(Db& db);  // PRAGMA user_version

// Applies every migration newer than the database's version, all in one IMMEDIATE transaction (two
// processes opening a fresh file at once cannot both create it). Throws a runtime_error naming the
// file and both versions when the database is newer than this code knows.
void migrate(Db& db);

// Throws unless the database is exactly at the current version (read-only connections cannot
// migrate).
void require_current_schema(Db& db);

}  // namespace attnbench::results
