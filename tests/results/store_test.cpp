// The store: schema versioning, atomic claims across handles and processes, upserts, and crash
// consistency under SIGKILL.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <thread>

#include "core/common/error.h"
#include "results/schema.h"
#include "results/sqlite.h"
#include "results/store.h"
#include "tests/results/fixture.h"

using namespace attnbench;
using namespace attnbench::results;
using attnbench::results::testing::TempDir;
using attnbench::results::testing::pending;
using attnbench::results::testing::test_metadata;

namespace {

int64_t count(Db& db, const std::string& sql, const std::string& arg = "") {
  Stmt s = db.prepare(sql);
  if (!arg.empty()) s.bind(1, arg);
  s.step();
  return s.integer(0);
}

std::string one_text(Db& db, const std::string& sql) {
  Stmt s = db.prepare(sql);
  s.step();
  return s.text(0);
}

// Waits for a forked child and returns its exit code (-signal when killed).
int wait_child(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return -WTERMSIG(status);
}

ClaimResult claim(Store& s, const std::string& id, const ClaimOptions& o = {}) {
  return s.claim_run("sw", pending(id, "cell-" + id, "{}", {{"train.seed", "0", "int"}}),
                     test_metadata(), o);
}

}  // namespace

CATCH_TEST_CASE("a new database gets the current schema, WAL and its tables") {
  TempDir dir;
  auto path = dir / "sub" / "r.db";  // the parent folder is created
  { Store s = Store::open(path); }
  Db db(path, true);
  CATCH_CHECK(schema_version(db) == current_schema_version());
  CATCH_CHECK(one_text(db, "PRAGMA journal_mode") == "wal");
  for (const char* t : {"sweeps", "runs", "sweep_runs", "params", "metrics", "evals", "attn_stats",
                        "samples", "attn_measurements"}) {
    CATCH_CHECK(count(db, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?", t) == 1);
  }
}

CATCH_TEST_CASE("an empty file is migrated and a newer schema is refused clearly") {
  TempDir dir;
  auto path = dir / "r.db";
  { std::ofstream touch(path); }  // 0 bytes: SQLite's empty database, nothing to lose
  { Store s = Store::open(path); }
  {
    Db db(path, false);
    CATCH_CHECK(schema_version(db) == current_schema_version());
    db.exec("PRAGMA user_version = " + std::to_string(current_schema_version() + 1));
  }
  CATCH_REQUIRE_THROWS_WITH(Store::open(path), Catch::Matchers::Contains("newer than this attnbench"));
  CATCH_REQUIRE_THROWS_WITH(Store::open(path, true),
                            Catch::Matchers::Contains("newer than this attnbench"));
}

CATCH_TEST_CASE("a version-1 database is read as it is and upgraded by a writer, learned kept apart") {
  TempDir dir;
  auto path = dir / "v1.db";
  {
    Store s = Store::open(path);
    CATCH_REQUIRE(claim(s, "r").claimed);
    s.record_attn_stats("r", {{0, -1, "sink_mass", -1, 0.5}, {0, -1, "tau", -1, -1.0, true}});
    // Back to version 1's layout: what versions 2-4 added is gone, user_version says 1.
    s.db().exec("DROP TABLE attn_measurements; ALTER TABLE attn_stats DROP COLUMN learned; "
                "ALTER TABLE samples DROP COLUMN choice_chars; PRAGMA user_version = 1");
  }
  const std::string learned_stats = "SELECT group_concat(stat) FROM attn_stats WHERE ";
  {
    Store ro = Store::open(path, true);  // read-only: reads version 1 as it is
    CATCH_CHECK(schema_version(ro.db()) == 1);
    CATCH_CHECK(one_text(ro.db(), learned_stats + attn_stats_learned_sql(ro.db())) == "tau");
  }
  {
    Db restored(path, false);  // a .dump restore loses user_version: still recognised as 1
    restored.exec("PRAGMA user_version = 0");
    CATCH_CHECK(inspect_schema(restored).version == 1);
  }
  { Store s = Store::open(path); }  // a writer upgrades it in place
  Db db(path, true);
  CATCH_CHECK(schema_version(db) == current_schema_version());
  CATCH_CHECK(one_text(db, learned_stats + "learned = 1") == "tau");
  CATCH_CHECK(attn_stats_learned_sql(db) == "learned");
}

CATCH_TEST_CASE("a version-2 database's samples read without choice lengths, upgraded by a writer") {
  TempDir dir;
  auto path = dir / "v2.db";
  {
    Store s = Store::open(path);
    CATCH_REQUIRE(claim(s, "r").claimed);
    Sample x;
    x.task = "piqa";
    x.choice_chars = 7;
    s.record_samples("r", {x});
    // Back to version 2's layout: what versions 3 and 4 added is gone, user_version says 2.
    s.db().exec("DROP TABLE attn_measurements; ALTER TABLE samples DROP COLUMN choice_chars; "
                "PRAGMA user_version = 2");
  }
  {
    Store ro = Store::open(path, true);  // read-only: reads version 2 as it is
    CATCH_CHECK(schema_version(ro.db()) == 2);
    CATCH_CHECK(samples_choice_chars_sql(ro.db()) == "NULL");
  }
  {
    Store s = Store::open(path);  // a writer upgrades it in place; old rows have no length
    Sample y;
    y.task = "piqa";
    y.request = 1;
    y.choice_chars = 5;
    s.record_samples("r", {y});
  }
  Db db(path, true);
  CATCH_CHECK(schema_version(db) == current_schema_version());
  CATCH_CHECK(samples_choice_chars_sql(db) == "choice_chars");
  CATCH_CHECK(one_text(db, "SELECT group_concat(coalesce(choice_chars, 'null')) FROM "
                           "(SELECT choice_chars FROM samples ORDER BY request)") == "null,5");
}

CATCH_TEST_CASE("a read-only open needs an existing database and never writes") {
  TempDir dir;
  CATCH_REQUIRE_THROWS_AS(Store::open(dir / "missing.db", true), UsageError);
  CATCH_CHECK(!std::filesystem::exists(dir / "missing.db"));
  { Store s = Store::open(dir / "r.db"); }
  Store ro = Store::open(dir / "r.db", true);
  CATCH_CHECK_THROWS(ro.upsert_sweep("x", "x.toml"));
  CATCH_CHECK(ro.runs().empty());
}

CATCH_TEST_CASE("two handles in one process: exactly one claims a run") {
  TempDir dir;
  Store a = Store::open(dir / "r.db");
  Store b = Store::open(dir / "r.db");
  ClaimResult ra = claim(a, "run1");
  ClaimResult rb = claim(b, "run1");
  CATCH_CHECK(ra.claimed);
  CATCH_CHECK_FALSE(ra.existed);
  CATCH_CHECK_FALSE(rb.claimed);
  CATCH_CHECK(rb.previous == RunStatus::Running);
  CATCH_CHECK(rb.holder == a.owner());
  CATCH_CHECK_FALSE(claim(a, "run1").claimed);  // not even by its own holder twice
  auto info = b.run("run1");
  CATCH_REQUIRE(info);
  CATCH_CHECK(info->status == RunStatus::Running);
  CATCH_CHECK(info->sweep == "sw");
  CATCH_CHECK(info->git_revision == "abc1234");
  CATCH_CHECK_FALSE(info->started.empty());
  CATCH_CHECK(b.params("run1").size() == 1);
}

CATCH_TEST_CASE("forked processes racing for one run: exactly one wins") {
  TempDir dir;
  auto path = dir / "r.db";
  { Store s = Store::open(path); }  // created before the race, as the runner does
  constexpr int kChildren = 6;
  std::vector<pid_t> pids;
  for (int i = 0; i < kChildren; ++i) {
    pid_t pid = fork();
    CATCH_REQUIRE(pid >= 0);
    if (pid == 0) {
      int code = 3;
      try {
        Store s = Store::open(path);
        ClaimResult r = claim(s, "contested");
        code = r.claimed ? 0 : 1;
        // Stay alive a moment so that a loser cannot see the winner's pid gone and take over.
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
      } catch (...) {
        code = 4;
      }
      _exit(code);
    }
    pids.push_back(pid);
  }
  int winners = 0, losers = 0;
  for (pid_t p : pids) {
    int code = wait_child(p);
    winners += code == 0;
    losers += code == 1;
  }
  CATCH_CHECK(winners == 1);
  CATCH_CHECK(losers == kChildren - 1);
}

CATCH_TEST_CASE("a claim held by a dead process is reclaimed, a live one is not") {
  TempDir dir;
  auto path = dir / "r.db";
  Store parent = Store::open(path);
  pid_t pid = fork();
  CATCH_REQUIRE(pid >= 0);
  if (pid == 0) {
    int code = 1;
    try {
      Store s = Store::open(path);
      code = claim(s, "orphan").claimed ? 0 : 1;
    } catch (...) {
      code = 4;
    }
    _exit(code);  // dies holding the claim, status still running
  }
  CATCH_REQUIRE(wait_child(pid) == 0);
  CATCH_CHECK(parent.run("orphan")->status == RunStatus::Running);
  ClaimResult r = claim(parent, "orphan");
  CATCH_CHECK(r.claimed);
  CATCH_CHECK(r.existed);
  CATCH_CHECK(r.previous == RunStatus::Running);
  CATCH_CHECK(parent.run("orphan")->owner == parent.owner());

  // Another host: only the heartbeat tells. Fresh -> held; older than stale_after_s -> stale.
  Db& db = parent.db();
  db.prepare("UPDATE runs SET owner_host = 'elsewhere', owner_pid = 1, heartbeat = ? WHERE id = ?")
      .bind_all(std::chrono::duration<double>(
                    std::chrono::system_clock::now().time_since_epoch()).count() - 100.0,
                std::string("orphan"))
      .run();
  ClaimOptions patient;
  patient.stale_after_s = 1000;
  ClaimResult held = claim(parent, "orphan", patient);
  CATCH_CHECK_FALSE(held.claimed);
  CATCH_CHECK(held.holder == "elsewhere:1");
  ClaimOptions impatient;
  impatient.stale_after_s = 50;
  CATCH_CHECK(claim(parent, "orphan", impatient).claimed);
}

CATCH_TEST_CASE("claims follow the status: finished never, failed and diverged only when asked") {
  TempDir dir;
  Store s = Store::open(dir / "r.db");
  for (auto [id, status] : {std::pair{"f", RunStatus::Finished}, {"x", RunStatus::Failed},
                            {"d", RunStatus::Diverged}, {"i", RunStatus::Interrupted},
                            {"p", RunStatus::Pending}}) {
    CATCH_REQUIRE(claim(s, id).claimed);
    s.set_status(id, status, status == RunStatus::Failed ? "out of memory" : "");
  }
  CATCH_CHECK(s.run("x")->error == "out of memory");
  CATCH_CHECK_FALSE(s.run("x")->finished.empty());
  CATCH_CHECK(s.run("p")->finished.empty());
  CATCH_CHECK_FALSE(claim(s, "f").claimed);
  CATCH_CHECK_FALSE(claim(s, "x").claimed);
  CATCH_CHECK_FALSE(claim(s, "d").claimed);
  CATCH_CHECK(claim(s, "i").claimed);
  CATCH_CHECK(claim(s, "p").claimed);
  ClaimOptions retry;
  retry.retry_failed = true;
  CATCH_CHECK_FALSE(claim(s, "d", retry).claimed);
  ClaimResult r = claim(s, "x", retry);
  CATCH_CHECK(r.claimed);
  CATCH_CHECK(r.previous == RunStatus::Failed);
  CATCH_CHECK(s.run("x")->error.empty());  // a new attempt starts clean
  CATCH_CHECK(s.run("x")->finished.empty());
  retry.retry_diverged = true;
  CATCH_CHECK(claim(s, "d", retry).claimed);
  CATCH_CHECK(count(s.db(), "SELECT attempts FROM runs WHERE id = ?", "x") == 2);
}

CATCH_TEST_CASE("a run shared by two sweeps belongs to both") {
  TempDir dir;
  Store s = Store::open(dir / "r.db");
  CATCH_REQUIRE(s.claim_run("a", pending("r", "cell-a", "{}"), test_metadata()).claimed);
  s.set_status("r", RunStatus::Finished);
  CATCH_CHECK_FALSE(s.claim_run("b", pending("r", "cell-b", "{}"), test_metadata()).claimed);
  CATCH_CHECK(s.runs({"a", std::nullopt}).size() == 1);
  CATCH_CHECK(s.runs({"b", std::nullopt}).size() == 1);
  CATCH_CHECK(s.runs({"c", std::nullopt}).empty());
  CATCH_CHECK(s.runs({"", RunStatus::Finished}).size() == 1);
  CATCH_CHECK(s.runs({"", RunStatus::Failed}).empty());
}

CATCH_TEST_CASE("pending runs are listed in the sweep's order and leave existing runs alone") {
  TempDir dir;
  Store s = Store::open(dir / "r.db");
  CATCH_REQUIRE(claim(s, "b").claimed);  // started before the sweep listed its cells
  s.set_status("b", RunStatus::Finished);
  std::vector<PendingRun> cells;
  for (const char* id : {"c", "a", "b", "d"}) {
    cells.push_back({id, std::string("cell-") + id, "{}", {{"attention.variant", id, "string"}}});
  }
  s.add_pending_runs("sw", cells);
  s.add_pending_runs("sw", cells);  // listing them again changes nothing
  std::vector<std::string> order;
  for (const RunInfo& r : s.runs({"sw", std::nullopt})) order.push_back(r.id);
  CATCH_CHECK(order == std::vector<std::string>{"b", "c", "a", "d"});  // b was created first
  CATCH_CHECK(s.run("b")->status == RunStatus::Finished);
  CATCH_CHECK(s.run("c")->status == RunStatus::Pending);
  CATCH_CHECK(s.params("a").size() == 1);
  CATCH_CHECK(s.params("a")[0].value == "a");
  CATCH_CHECK(count(s.db(), "SELECT count(*) FROM params WHERE run = ?", "b") == 1);
  ClaimResult r = claim(s, "a");  // a listed run is claimed like a new one
  CATCH_CHECK(r.claimed);
  CATCH_CHECK(r.previous == RunStatus::Pending);
  CATCH_CHECK(s.run("a")->status == RunStatus::Running);
}

CATCH_TEST_CASE("a claim writes a run's config and params once, again only when the config changed") {
  TempDir dir;
  Store s = Store::open(dir / "r.db");
  const std::string sql = "SELECT count(*) FROM params WHERE run = ? AND key = 'train.device'";
  s.add_pending_runs("sw", {pending("r", "cell-r", R"({"device":"cpu"})",
                                    {{"train.device", "cpu", "string"}})});
  // The same config: the listed params stay (a claimer's params list is not written again).
  CATCH_REQUIRE(s.claim_run("sw", pending("r", "cell-r", R"({"device":"cpu"})"), test_metadata())
                    .claimed);
  CATCH_CHECK(count(s.db(), sql, "r") == 1);
  // Resumed on another device (an execution-only key, the same run id): the claimer's config and
  // params replace the stored ones.
  s.set_status("r", RunStatus::Interrupted);
  CATCH_REQUIRE(s.claim_run("sw",
                            pending("r", "cell-r", R"({"device":"cuda"})",
                                    {{"train.device", "cuda", "string"}}),
                            test_metadata())
                    .claimed);
  CATCH_CHECK(s.run("r")->config_json == R"({"device":"cuda"})");
  CATCH_REQUIRE(s.params("r").size() == 1);
  CATCH_CHECK(s.params("r")[0].value == "cuda");
}

CATCH_TEST_CASE("re-logging a metric, eval, stat or sample replaces it, never duplicates") {
  TempDir dir;
  Store s = Store::open(dir / "r.db");
  CATCH_REQUIRE(claim(s, "r").claimed);
  s.log_metrics("r", {{"loss", 10, 3.5, 0}, {"lr", 10, 1e-3, 0}});
  s.log_metrics("r", {{"loss", 10, 3.25, 0}, {"loss", 20, 3.0, 0}});  // resumed run re-logs step 10
  auto loss = s.metrics("r", "loss");
  CATCH_REQUIRE(loss.size() == 2);
  CATCH_CHECK(loss[0].step == 10);
  CATCH_CHECK(loss[0].value == 3.25);
  CATCH_CHECK(loss[1].step == 20);
  CATCH_CHECK(loss[0].time > 1.6e9);  // 0 = now, wall clock

  using attnbench::results::testing::eval;
  s.record_evals("r", {eval("piqa", "acc", 0.6, 0.01), eval("piqa", "acc_norm", 0.62, 0.01)});
  s.record_evals("r", {eval("piqa", "acc", 0.61, 0.02)});
  auto evals = s.evals("r");
  CATCH_REQUIRE(evals.size() == 2);
  CATCH_CHECK(evals[0].value == 0.61);
  CATCH_CHECK(*evals[0].std_error == 0.02);

  s.record_attn_stats("r", {{0, 1, "sink_mass", -1, 0.4}, {0, 1, "sink_mass", -1, 0.3}});
  s.record_samples("r", {{"piqa", 0, 1, -3.2, true, true, 4}, {"piqa", 0, 1, -3.1, false, true, 4}});
  CATCH_CHECK(count(s.db(), "SELECT count(*) FROM attn_stats") == 1);
  CATCH_CHECK(count(s.db(), "SELECT count(*) FROM samples") == 1);
  CATCH_CHECK(count(s.db(), "SELECT is_greedy FROM samples") == 0);
}

CATCH_TEST_CASE("an eval row is never replaced by a different measurement of its task") {
  TempDir dir;
  Store s = Store::open(dir / "r.db");
  CATCH_REQUIRE(claim(s, "r").claimed);
  using attnbench::results::testing::eval;
  EvalRow copa = eval("copa", "acc", 0.57, 0.05);
  copa.n = 100;
  copa.limit = 100;
  s.record_evals("r", {copa});
  // Another limit, protocol or BOS policy: refused naming both, every metric of the task alike.
  for (auto change : {+[](EvalRow& e) { e.limit = 50, e.n = 50, e.value = 0.54; },
                      +[](EvalRow& e) { e.protocol_version = "other-protocol"; },
                      +[](EvalRow& e) { e.bos = "prepend"; },
                      +[](EvalRow& e) { e.limit = 0, e.metric = "acc_norm"; }}) {
    EvalRow other = copa;
    change(other);
    CATCH_CHECK_THROWS_WITH(s.record_task("r", {other}, {}),
                            Catch::Matchers::Contains("already holds copa scored with limit 100") &&
                                Catch::Matchers::Contains("different measurement"));
    CATCH_CHECK_THROWS_AS(s.require_same_identity("r", other), UsageError);
  }
  auto stored = s.evals("r");
  CATCH_REQUIRE(stored.size() == 1);
  CATCH_CHECK(stored[0].value == 0.57);
  CATCH_CHECK(stored[0].n == 100);
  // The same identity re-scores in place; another task is not affected.
  copa.value = 0.58;
  s.record_evals("r", {copa, eval("piqa", "acc", 0.6, 0.01)});
  CATCH_CHECK(s.evals("r").size() == 2);
  CATCH_CHECK(s.evals("r")[0].value == 0.58);
}

CATCH_TEST_CASE("attention statistics are stored with their measurement, never replaced by another") {
  TempDir dir;
  Store s = Store::open(dir / "r.db");
  CATCH_REQUIRE(claim(s, "r").claimed);
  CATCH_CHECK_FALSE(s.attn_measurement("r"));
  AttnMeasurement m;
  m.window = 128;
  m.tokens = 8192;
  m.text = "val.bin";
  m.detail = "val.bin (first 8192 of 120000 tokens)";
  s.record_attn_stats("r", {{-1, -1, "sink_mass", -1, 0.43}}, m);
  CATCH_REQUIRE(s.attn_measurement("r"));
  CATCH_CHECK(s.attn_measurement("r")->window == 128);
  CATCH_CHECK(s.attn_measurement("r")->detail == m.detail);
  for (auto change : {+[](AttnMeasurement& x) { x.window = 512; },
                      +[](AttnMeasurement& x) { x.tokens = 4096; },
                      +[](AttnMeasurement& x) { x.text = "essay.txt"; }}) {
    AttnMeasurement other = m;
    change(other);
    CATCH_CHECK_THROWS_WITH(
        s.record_attn_stats("r", {{-1, -1, "sink_mass", -1, 0.35}}, other),
        Catch::Matchers::Contains("already holds attention statistics measured on windows of 128 "
                                  "tokens, 8192 tokens of val.bin") &&
            Catch::Matchers::Contains("different measurement"));
  }
  CATCH_CHECK(count(s.db(), "SELECT count(*) FROM attn_stats WHERE value = 0.43") == 1);
  s.record_attn_stats("r", {{-1, -1, "sink_mass", -1, 0.44}}, m);  // the same measurement, again
  CATCH_CHECK(count(s.db(), "SELECT count(*) FROM attn_stats WHERE value = 0.44") == 1);
}

CATCH_TEST_CASE("writes to an unknown run are refused, naming the run") {
  TempDir dir;
  Store s = Store::open(dir / "r.db");
  CATCH_REQUIRE_THROWS_WITH(s.log_metrics("nope", {{"loss", 1, 1.0, 0}}),
                            Catch::Matchers::Contains("no run 'nope'"));
  CATCH_REQUIRE_THROWS_AS(parse_status("finshed"), UsageError);
  CATCH_REQUIRE_THROWS_WITH(parse_status("finshed"), Catch::Matchers::Contains("finished"));
}

// A child writes transactions in a loop (each: one step of kKeys metrics, then a status flip with
// its timestamp) and is SIGKILLed at an arbitrary moment; the survivor must see only whole
// transactions and an intact file.
CATCH_TEST_CASE("SIGKILL in the middle of a loop of transactions leaves a consistent database") {
  TempDir dir;
  auto path = dir / "r.db";
  constexpr int kKeys = 16;
  {
    Store s = Store::open(path);
    CATCH_REQUIRE(claim(s, "r").claimed);
  }
  for (int round = 0; round < 3; ++round) {
    pid_t pid = fork();
    CATCH_REQUIRE(pid >= 0);
    if (pid == 0) {
      try {
        Store s = Store::open(path);
        for (int64_t step = round * 1000000;; ++step) {
          std::vector<Metric> batch;
          for (int k = 0; k < kKeys; ++k) batch.push_back({"m" + std::to_string(k), step, 1.0 * k, 0});
          s.log_metrics("r", batch);
          s.set_status("r", step % 2 ? RunStatus::Interrupted : RunStatus::Running);
        }
      } catch (...) {
      }
      _exit(4);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(150 + 70 * round));
    kill(pid, SIGKILL);
    CATCH_REQUIRE(wait_child(pid) == -SIGKILL);
  }
  Db db(path, false);
  CATCH_CHECK(one_text(db, "PRAGMA integrity_check") == "ok");
  CATCH_CHECK(count(db, "SELECT count(*) FROM metrics") > 3 * kKeys);  // work was done each round
  // Every step is whole: kKeys rows, never fewer.
  CATCH_CHECK(count(db, "SELECT count(*) FROM (SELECT step FROM metrics GROUP BY step "
                        "HAVING count(*) != " + std::to_string(kKeys) + ")") == 0);
  // The status and its timestamp changed together: interrupted <=> finished is set.
  CATCH_CHECK(count(db, "SELECT count(*) FROM runs WHERE (status = 'interrupted') != "
                        "(finished IS NOT NULL)") == 0);
  CATCH_CHECK(one_text(db, "PRAGMA foreign_key_check") == "");
}
