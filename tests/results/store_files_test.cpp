// Files that are not what the store expects: another application's database, a text file, a .dump
// restore that lost PRAGMA user_version, a path that does not exist, a folder; and SQLite's own
// errors, restated with the file and the table.
#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "core/common/error.h"
#include "results/merge.h"
#include "results/schema.h"
#include "results/sql.h"
#include "results/sqlite.h"
#include "results/store.h"
#include "tests/results/fixture.h"

using namespace attnbench;
using namespace attnbench::results;
using attnbench::results::testing::add_run;
using attnbench::results::testing::TempDir;
using Catch::Matchers::Contains;

namespace {

std::string one_text(const std::filesystem::path& path, const std::string& sql) {
  Db db(path, true);
  Stmt s = db.prepare(sql);
  s.step();
  return s.text(0);
}

void write_file(const std::filesystem::path& path, const std::string& content) {
  std::ofstream(path) << content;
}

// What `sqlite3 old.db .dump | sqlite3 new.db` leaves: the tables and rows, user_version 0.
void make_restored_dump(const std::filesystem::path& path) {
  Db db(path, false);
  for (const Migration& m : migrations()) db.exec(m.sql);
  db.exec("INSERT INTO sweeps(name, created) VALUES ('sw', '2026-01-01T00:00:00.000Z')");
  db.exec("INSERT INTO runs(id, sweep, cell, status, config, created) "
          "VALUES ('r1', 'sw', 'c', 'finished', '{}', '2026-01-01T00:00:00.000Z')");
  db.exec("INSERT INTO sweep_runs(sweep, run, cell) VALUES ('sw', 'r1', 'c')");
}

}  // namespace

CATCH_TEST_CASE("another application's database is refused as OUT and as input, and left untouched") {
  TempDir dir;
  auto other = dir / "other.db", good = dir / "good.db";
  {
    Db db(other, false);
    db.exec("CREATE TABLE notes(x); INSERT INTO notes VALUES (1)");
  }
  { Store s = Store::open(good); add_run(s, "sw", "r1", {}); }
  const auto size = std::filesystem::file_size(other);

  CATCH_CHECK_THROWS_AS(merge_databases(other, {good}), InputError);
  CATCH_CHECK_THROWS_WITH(merge_databases(other, {good}),
                          Contains(other.string()) && Contains("not an attnbench results database") &&
                              Contains("notes"));
  CATCH_CHECK_THROWS_AS(Store::open(other), InputError);  // a sweep or eval --db: same refusal
  CATCH_CHECK(one_text(other, "SELECT group_concat(name) FROM sqlite_master") == "notes");
  CATCH_CHECK(one_text(other, "PRAGMA journal_mode") == "delete");  // not even switched to WAL
  CATCH_CHECK(std::filesystem::file_size(other) == size);

  // As an input: refused before OUT is created.
  auto out = dir / "out.db";
  CATCH_CHECK_THROWS_WITH(merge_databases(out, {good, other}),
                          Contains(other.string()) && Contains("not an attnbench results database"));
  CATCH_CHECK_FALSE(std::filesystem::exists(out));

  // Some of our tables, not all: incomplete, refused as well.
  auto partial = dir / "partial.db";
  { Db db(partial, false); db.exec("CREATE TABLE runs(id TEXT)"); }
  CATCH_CHECK_THROWS_WITH(Store::open(partial), Contains("not a complete attnbench results database") &&
                                                    Contains("evals"));
  // A foreign file that happens to set user_version.
  { Db db(other, false); db.exec("PRAGMA user_version = 1"); }
  CATCH_CHECK_THROWS_AS(Store::open(other, true), InputError);
}

CATCH_TEST_CASE("a text file or a folder is refused at once with the path") {
  TempDir dir;
  auto text = dir / "notes.txt", good = dir / "good.db";
  write_file(text, "hello, this is not a database\n");
  { Store s = Store::open(good); }
  for (bool read_only : {false, true}) {
    CATCH_CAPTURE(read_only);
    CATCH_CHECK_THROWS_AS(Store::open(text, read_only), InputError);
    CATCH_CHECK_THROWS_WITH(Store::open(text, read_only),
                            Contains(text.string()) && Contains("not an SQLite database"));
  }
  CATCH_CHECK_THROWS_AS(merge_databases(text, {good}), InputError);
  CATCH_CHECK_THROWS_AS(merge_databases(good, {text}), InputError);
  CATCH_CHECK_THROWS_AS(run_readonly_sql(text, "SELECT 1"), InputError);
  CATCH_CHECK_THROWS_WITH(Store::open(dir.path(), true), Contains("is a folder"));
  CATCH_CHECK_THROWS_WITH(Store::open(dir.path()), Contains("is a folder"));

  // An empty file holds no results: a reader says so (a writer creates the schema in it).
  auto empty = dir / "empty.db";
  write_file(empty, "");
  CATCH_CHECK_THROWS_AS(Store::open(empty, true), InputError);
  CATCH_CHECK_THROWS_WITH(run_readonly_sql(empty, "SELECT 1"), Contains("an empty database"));
}

CATCH_TEST_CASE("a .dump restore is recognised by its tables: read as is, stamped when written") {
  TempDir dir;
  auto restored = dir / "restored.db";
  make_restored_dump(restored);
  {
    Db db(restored, true);
    SchemaState state = inspect_schema(db);
    CATCH_CHECK(state.version == current_schema_version());
    CATCH_CHECK_FALSE(state.recorded);
  }
  // Read-only commands use it directly...
  CATCH_CHECK(render_grid(run_readonly_sql(restored, "SELECT id FROM runs"), "csv") == "id\nr1\n");
  CATCH_CHECK(Store::open(restored, true).runs().size() == 1);
  CATCH_CHECK(one_text(restored, "PRAGMA user_version") == "0");  // and never write
  // ...it merges as an input and as OUT...
  auto out = dir / "out.db";
  CATCH_CHECK(merge_databases(out, {restored}).runs.added == 1);
  CATCH_CHECK(merge_databases(restored, {out}).runs.kept == 1);
  // ...and a writer records its version.
  CATCH_CHECK(one_text(restored, "PRAGMA user_version") == std::to_string(current_schema_version()));
  CATCH_CHECK(one_text(restored, "SELECT count(*) FROM runs") == "1");
}

CATCH_TEST_CASE("read-only opens never create a file") {
  TempDir dir;
  auto missing = dir / "sub" / "none.db";
  CATCH_CHECK_THROWS_WITH(Store::open(missing, true),
                          Contains("no results database at " + missing.string()));
  CATCH_CHECK_THROWS_AS(run_readonly_sql(missing, "SELECT 1"), UsageError);
  CATCH_CHECK_FALSE(std::filesystem::exists(missing));
  CATCH_CHECK_FALSE(std::filesystem::exists(dir / "sub"));
}

CATCH_TEST_CASE("SQLite errors name the file, the table and what to do") {
  TempDir dir;
  auto path = dir / "r.db";
  { Store s = Store::open(path); add_run(s, "sw", "r1", {}); }
  Db holder(path, false);
  holder.exec("BEGIN IMMEDIATE");  // another writer holds the lock
  Db writer(path, false);
  sqlite3_busy_timeout(writer.handle(), 20);  // the real 30 s would make this test slow
  try {
    writer
        .prepare("INSERT INTO evals(run, task, metric, value, n, time) "
                 "VALUES ('r1', 'piqa', 'acc', 0.5, 1, 0)")
        .run();
    CATCH_FAIL("the write should have been refused: the database is locked");
  } catch (const SqliteError& e) {
    CATCH_CHECK(e.busy());
    CATCH_CHECK_THAT(e.what(), Contains(path.string()) && Contains("writing table evals") &&
                                   Contains("database is locked") && Contains("another process"));
  }
  holder.exec("ROLLBACK");
  CATCH_CHECK_THROWS_WITH(writer.prepare("SELECT nope FROM runs"),
                          Contains(path.string()) && Contains("reading table runs") &&
                              Contains("no such column: nope"));
}
