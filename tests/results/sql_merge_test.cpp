// `results sql` refuses writes; `results merge` is idempotent and resolves conflicts by status.
#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "results/merge.h"
#include "results/schema.h"
#include "results/sql.h"
#include "results/sqlite.h"
#include "tests/results/fixture.h"

using namespace attnbench;
using namespace attnbench::results;
using attnbench::results::testing::add_run;
using attnbench::results::testing::eval;
using attnbench::results::testing::TempDir;
using Catch::Matchers::Contains;

namespace {

int64_t scalar(const std::filesystem::path& db, const std::string& sql) {
  Grid g = run_readonly_sql(db, sql);
  return g.rows.at(0).at(0).get<int64_t>();
}

// Every row of the tables that matter, as text, for comparing two databases.
std::string dump(const std::filesystem::path& db) {
  std::string out;
  for (const char* q : {"SELECT id, status, cell, COALESCE(sweep, '') FROM runs ORDER BY id",
                        "SELECT sweep, run FROM sweep_runs ORDER BY sweep, run",
                        "SELECT run, key, step, value FROM metrics ORDER BY run, key, step",
                        "SELECT run, task, metric, value FROM evals ORDER BY run, task, metric",
                        "SELECT run, key, value FROM params ORDER BY run, key"}) {
    out += render_grid(run_readonly_sql(db, q), "csv");
  }
  return out;
}

}  // namespace

CATCH_TEST_CASE("results sql reads, and refuses every kind of write") {
  TempDir dir;
  auto path = dir / "r.db";
  {
    Store s = Store::open(path);
    add_run(s, "sw", "r1", {{"train.seed", "0", "int"}});
    s.log_metrics("r1", {{"loss", 1, 2.5, 0}});
  }
  Grid g = run_readonly_sql(path, "SELECT id, status, 1.5 AS x, NULL AS n FROM runs");
  CATCH_REQUIRE(g.rows.size() == 1);
  CATCH_CHECK(g.headers == std::vector<std::string>{"id", "status", "x", "n"});
  CATCH_CHECK(g.rows[0][0] == "r1");
  CATCH_CHECK(g.rows[0][2] == 1.5);
  CATCH_CHECK(g.rows[0][3].is_null());
  CATCH_CHECK(render_grid(g, "csv") == "id,status,x,n\nr1,finished,1.5,\n");

  for (const char* write : {"INSERT INTO metrics(run, key, step, value, time) VALUES ('r1','loss',2,1,0)",
                            "UPDATE runs SET status = 'failed'",
                            "DELETE FROM metrics",
                            "DROP TABLE metrics",
                            "CREATE TABLE t(x)",
                            "CREATE TEMP TABLE t(x)",
                            "REPLACE INTO sweeps(name, file, created) VALUES ('x', '', '')",
                            "PRAGMA user_version = 7",
                            "VACUUM"}) {
    CATCH_CAPTURE(write);
    CATCH_CHECK_THROWS_AS(run_readonly_sql(path, write), UsageError);
    CATCH_CHECK_THROWS_WITH(run_readonly_sql(path, write), Contains("read-only"));
  }
  CATCH_CHECK_THROWS_WITH(run_readonly_sql(path, "ATTACH DATABASE '" + (dir / "other.db").string() + "' AS o"),
                          Contains("read-only: ATTACH is refused"));
  CATCH_CHECK_FALSE(std::filesystem::exists(dir / "other.db"));
  CATCH_CHECK_THROWS_WITH(run_readonly_sql(path, "SELECT 1; DELETE FROM metrics"),
                          Contains("one statement at a time"));
  CATCH_CHECK_THROWS_AS(run_readonly_sql(path, "SELEC 1"), UsageError);
  CATCH_CHECK_THROWS_AS(run_readonly_sql(path, "  -- nothing\n"), UsageError);
  CATCH_CHECK_THROWS_AS(run_readonly_sql(dir / "absent.db", "SELECT 1"), UsageError);
  CATCH_CHECK(run_readonly_sql(path, "SELECT 1; -- trailing comment\n").rows.size() == 1);

  // Nothing changed.
  CATCH_CHECK(scalar(path, "SELECT count(*) FROM metrics") == 1);
  CATCH_CHECK(scalar(path, "SELECT count(*) FROM runs WHERE status = 'finished'") == 1);
  CATCH_CHECK(scalar(path, "PRAGMA user_version") == current_schema_version());
}

CATCH_TEST_CASE("merge: per-cell databases fold into one, idempotently, finished wins") {
  TempDir dir;
  auto a = dir / "a.db", b = dir / "b.db";
  {
    Store s = Store::open(a);
    s.upsert_sweep("sw", "sweeps/sw.toml");
    add_run(s, "sw", "r1", {{"train.seed", "0", "int"}});
    s.log_metrics("r1", {{"loss", 1, 3.0, 0}, {"loss", 2, 2.0, 0}});
    s.record_evals("r1", {eval("piqa", "acc", 0.6, 0.01)});
    // r2 was interrupted here after two steps...
    add_run(s, "sw", "r2", {{"train.seed", "1", "int"}}, RunStatus::Interrupted);
    s.log_metrics("r2", {{"loss", 1, 9.0, 0}, {"loss", 2, 8.0, 0}});
  }
  {
    Store s = Store::open(b);
    // ...and finished in another array task, with different numbers.
    add_run(s, "sw", "r2", {{"train.seed", "1", "int"}});
    s.log_metrics("r2", {{"loss", 1, 3.1, 0}, {"loss", 2, 2.1, 0}, {"loss", 3, 1.9, 0}});
    s.record_evals("r2", {eval("piqa", "acc", 0.61, 0.01)});
    add_run(s, "other", "r3", {{"train.seed", "2", "int"}});
    s.claim_run("other", attnbench::results::testing::pending("r1", "r1", "{}"),
                attnbench::results::testing::test_metadata());
  }
  auto out = dir / "out.db";
  MergeSummary m = merge_databases(out, {a, b});
  CATCH_CHECK(m.runs.added == 3);     // r1, r2 from a; r3 from b
  CATCH_CHECK(m.runs.replaced == 1);  // r2: b's finished copy beats a's interrupted one
  CATCH_CHECK(m.runs.kept == 1);      // r1: b's running copy loses to a's finished one
  CATCH_CHECK(m.metrics.added == 2 + 2 + 1);  // a: r1 1-2, r2 1-2; b: r2 step 3
  CATCH_CHECK(m.metrics.replaced == 2);       // r2 steps 1-2: b logged them later
  CATCH_CHECK(scalar(out, "SELECT count(*) FROM runs WHERE status = 'finished'") == 3);
  CATCH_CHECK(scalar(out, "SELECT count(*) FROM metrics WHERE run = 'r2'") == 3);  // b's only
  CATCH_CHECK(scalar(out, "SELECT count(*) FROM metrics WHERE run = 'r2' AND value > 5") == 0);
  CATCH_CHECK(scalar(out, "SELECT count(*) FROM metrics WHERE run = 'r1'") == 2);
  CATCH_CHECK(scalar(out, "SELECT count(*) FROM evals") == 2);
  CATCH_CHECK(scalar(out, "SELECT count(*) FROM sweep_runs") == 4);  // sw: r1 r2; other: r1 r3
  CATCH_CHECK(run_readonly_sql(out, "SELECT file FROM sweeps WHERE name = 'sw'").rows[0][0] ==
              "sweeps/sw.toml");

  std::string first = dump(out);
  MergeSummary again = merge_databases(out, {a, b});  // idempotent
  CATCH_CHECK(again.runs.added == 0);
  CATCH_CHECK(again.runs.replaced == 0);
  CATCH_CHECK(again.metrics.added + again.metrics.replaced + again.evals.added +
                  again.evals.replaced + again.memberships.added == 0);
  CATCH_CHECK(again.evals.kept == 2);
  CATCH_CHECK(dump(out) == first);

  auto reversed = dir / "reversed.db";  // the other order gives the same result
  merge_databases(reversed, {b, a});
  CATCH_CHECK(dump(reversed) == first);

  Db check(out, true);
  Stmt s = check.prepare("PRAGMA integrity_check");
  s.step();
  CATCH_CHECK(s.text(0) == "ok");

  CATCH_CHECK_THROWS_AS(merge_databases(out, {out}), UsageError);
  CATCH_CHECK_THROWS_AS(merge_databases(out, {dir / "missing.db"}), UsageError);
}
