// `results merge` never loses a row: every row kind is the union of OUT and the input, a conflict
// is decided by the rule of its kind (results/merge.h), and the summary counts each input row once.
#include <catch2/catch.hpp>

#include "results/merge.h"
#include "results/schema.h"
#include "results/sqlite.h"
#include "results/store.h"
#include "tests/results/fixture.h"

using namespace attnbench::results;
using attnbench::results::testing::TempDir;

namespace {

// A database holding run r1 of sweep sw, finished at `finished`, and nothing else.
void make_db(const std::filesystem::path& path, const std::string& finished) {
  { Store s = Store::open(path); }
  Db db(path, false);
  db.exec("INSERT INTO sweeps(name, created) VALUES ('sw', '2026-01-01T00:00:00.000Z')");
  db.prepare("INSERT INTO runs(id, sweep, cell, status, config, created, finished) "
             "VALUES ('r1', 'sw', 'c', 'finished', '{}', '2026-01-01T00:00:00.000Z', ?)")
      .bind(1, finished)
      .run();
  db.exec("INSERT INTO sweep_runs(sweep, run, cell) VALUES ('sw', 'r1', 'c')");
  db.exec("INSERT INTO params(run, key, value, type) VALUES ('r1', 'train.seed', '0', 'int')");
}

void add_eval(const std::filesystem::path& path, const std::string& task, double value, double time,
              int64_t n = 100) {
  Db db(path, false);
  db.prepare("INSERT INTO evals(run, task, metric, value, n, time) VALUES ('r1', ?, 'acc', ?, ?, ?)")
      .bind_all(task, value, n, time)
      .run();
}

std::string text(const std::filesystem::path& path, const std::string& sql) {
  Db db(path, true);
  Stmt s = db.prepare(sql);
  return s.step() ? s.text(0) : "<no row>";
}

const char* kEarly = "2026-01-01T01:00:00.000Z";
const char* kLate = "2026-01-02T01:00:00.000Z";

}  // namespace

CATCH_TEST_CASE("merge: a task evaluated only in the input is added, whichever copy wins the run") {
  TempDir dir;
  auto out = dir / "out.db", in = dir / "in.db";
  make_db(out, kEarly);
  add_eval(out, "piqa", 0.6, 1000);
  make_db(in, kEarly);
  add_eval(in, "piqa", 0.6, 1000);
  add_eval(in, "hellaswag", 0.3, 2000);  // the sweep added a task; this array task scored it

  MergeSummary m = merge_databases(out, {in});
  CATCH_CHECK(m.runs.kept == 1);  // same status, same finish time: OUT's run row stays
  CATCH_CHECK(m.evals.added == 1);
  CATCH_CHECK(m.evals.kept == 1);
  CATCH_CHECK(m.evals.replaced == 0);
  CATCH_CHECK(text(out, "SELECT group_concat(task, ',') FROM (SELECT task FROM evals ORDER BY rowid)") ==
              "piqa,hellaswag");

  // The other way round, with the input's copy of the run winning (it finished first): OUT's
  // extra task must survive.
  auto out2 = dir / "out2.db", in2 = dir / "in2.db";
  make_db(out2, kLate);
  add_eval(out2, "piqa", 0.6, 1000);
  add_eval(out2, "hellaswag", 0.3, 2000);
  make_db(in2, kEarly);
  add_eval(in2, "piqa", 0.6, 1000);
  MergeSummary r = merge_databases(out2, {in2});
  CATCH_CHECK(r.runs.replaced == 1);
  CATCH_CHECK(r.evals.kept == 1);
  CATCH_CHECK(r.evals.added == 0);
  CATCH_CHECK(text(out2, "SELECT count(*) FROM evals") == "2");
  CATCH_CHECK(text(out2, "SELECT finished FROM runs") == kEarly);
  CATCH_CHECK(text(out2, "SELECT count(*) FROM params") == "1");  // the winner's, not doubled
}

CATCH_TEST_CASE("merge: the newer evaluation wins, then more items, then OUT's, in either order") {
  TempDir dir;
  auto a = dir / "a.db", b = dir / "b.db";
  make_db(a, kEarly);
  add_eval(a, "piqa", 0.60, 1000);
  add_eval(a, "arc_easy", 0.40, 3000);           // newer than b's
  add_eval(a, "winogrande", 0.50, 1000, 100);    // same time, fewer items than b's
  add_eval(a, "boolq", 0.55, 1000);              // a full tie with b's: OUT's copy stays
  make_db(b, kEarly);
  add_eval(b, "piqa", 0.70, 2000);               // newer than a's
  add_eval(b, "arc_easy", 0.45, 1000);
  add_eval(b, "winogrande", 0.52, 1000, 1267);
  add_eval(b, "boolq", 0.56, 1000);

  auto ab = dir / "ab.db", ba = dir / "ba.db";
  std::filesystem::copy_file(a, ab);
  std::filesystem::copy_file(b, ba);
  MergeSummary m = merge_databases(ab, {b});
  CATCH_CHECK(m.evals.replaced == 2);  // piqa (newer), winogrande (more items)
  CATCH_CHECK(m.evals.kept == 2);      // arc_easy (older), boolq (tie: OUT's)
  merge_databases(ba, {a});
  for (const auto& [task, want] :
       {std::pair{"piqa", "0.7"}, {"arc_easy", "0.4"}, {"winogrande", "0.52"}}) {
    CATCH_CAPTURE(task);
    const std::string sql = std::string("SELECT value FROM evals WHERE task = '") + task + "'";
    CATCH_CHECK(text(ab, sql) == want);
    CATCH_CHECK(text(ba, sql) == want);
  }
  CATCH_CHECK(text(ab, "SELECT value FROM evals WHERE task = 'boolq'") == "0.55");
}

CATCH_TEST_CASE("merge: two different measurements of one task replace neither") {
  TempDir dir;
  auto out = dir / "out.db", in = dir / "in.db";
  make_db(out, kEarly);
  add_eval(out, "copa", 0.57, 1000);
  make_db(in, kEarly);
  add_eval(in, "copa", 0.54, 2000, 50);  // newer, but scored at another item limit
  Db(in, false).exec("UPDATE evals SET item_limit = 50");
  CATCH_CHECK_THROWS_WITH(
      merge_databases(out, {in}),
      Catch::Matchers::Contains("holds copa acc scored with limit 50") &&
          Catch::Matchers::Contains("the output database with every item") &&
          Catch::Matchers::Contains("replaces neither"));
  CATCH_CHECK(text(out, "SELECT value FROM evals") == "0.57");
  CATCH_CHECK(text(out, "SELECT count(*) FROM evals") == "1");
}

CATCH_TEST_CASE("merge: attention statistics measured two ways replace neither") {
  TempDir dir;
  auto out = dir / "out.db", in = dir / "in.db";
  make_db(out, kLate);
  make_db(in, kEarly);  // the input's copy of the run would win
  Db(out, false).exec("INSERT INTO attn_measurements(run, window, tokens, text, time) "
                      "VALUES ('r1', 128, 8192, 'val.bin', 10)");
  Db(in, false).exec("INSERT INTO attn_measurements(run, window, tokens, text, time) "
                     "VALUES ('r1', 512, 8192, 'essay.txt', 20)");
  CATCH_CHECK_THROWS_WITH(merge_databases(out, {in}),
                          Catch::Matchers::Contains("measured on windows of 512 tokens, 8192 tokens "
                                                    "of essay.txt, the output database on windows "
                                                    "of 128 tokens") &&
                              Catch::Matchers::Contains("replaces neither"));
  CATCH_CHECK(text(out, "SELECT window FROM attn_measurements") == "128");
  // The same measurement merges (the winner's copy, as its statistics).
  Db(in, false).exec("UPDATE attn_measurements SET window = 128, text = 'val.bin'");
  merge_databases(out, {in});
  CATCH_CHECK(text(out, "SELECT time FROM attn_measurements") == "20.0");
}

CATCH_TEST_CASE("merge: metrics, samples and attention statistics are unions too") {
  TempDir dir;
  auto out = dir / "out.db", in = dir / "in.db";
  make_db(out, kLate);
  make_db(in, kEarly);  // the input's copy of the run wins
  {
    Db o(out, false);
    o.exec("INSERT INTO metrics(run, key, step, value, time) VALUES "
           "('r1', 'train/loss', 1, 5.0, 10), ('r1', 'train/loss', 2, 4.0, 50)");
    o.exec("INSERT INTO evals(run, task, metric, value, n, time) "
           "VALUES ('r1', 'piqa', 'acc', 0.6, 2, 3000)");
    o.exec("INSERT INTO samples(run, task, doc, request, loglikelihood, is_greedy, is_gold) VALUES "
           "('r1', 'piqa', 0, 0, -1.0, 1, 1), ('r1', 'piqa', 1, 0, -3.0, 0, 1)");
    o.exec("INSERT INTO attn_stats(run, layer, head, stat, value) VALUES "
           "('r1', 0, -1, 'sparsity', 0.1), ('r1', 1, -1, 'sparsity', 0.2)");
  }
  {
    Db i(in, false);
    i.exec("INSERT INTO metrics(run, key, step, value, time) VALUES "
           "('r1', 'train/loss', 2, 4.5, 20), ('r1', 'train/loss', 3, 3.0, 30)");
    i.exec("INSERT INTO evals(run, task, metric, value, n, time) "
           "VALUES ('r1', 'piqa', 'acc', 0.5, 2, 1000)");
    i.exec("INSERT INTO samples(run, task, doc, request, loglikelihood, is_greedy, is_gold) VALUES "
           "('r1', 'piqa', 0, 0, -2.0, 1, 1), ('r1', 'piqa', 2, 0, -4.0, 0, 1)");
    i.exec("INSERT INTO attn_stats(run, layer, head, stat, value) VALUES "
           "('r1', 0, -1, 'sparsity', 0.3), ('r1', 2, -1, 'sparsity', 0.4)");
  }
  MergeSummary m = merge_databases(out, {in});
  CATCH_CHECK(m.runs.replaced == 1);
  // Metrics: step 2 was logged later in OUT (time 50 > 20), step 3 is new.
  CATCH_CHECK(m.metrics.added == 1);
  CATCH_CHECK(m.metrics.kept == 1);
  CATCH_CHECK(text(out, "SELECT group_concat(value, ',') FROM "
                        "(SELECT value FROM metrics ORDER BY step)") == "5.0,4.0,3.0");
  // Samples follow their task's evaluation: OUT's piqa is newer, so OUT's doc 0 stays.
  CATCH_CHECK(m.samples.added == 1);
  CATCH_CHECK(m.samples.kept == 1);
  CATCH_CHECK(text(out, "SELECT loglikelihood FROM samples WHERE doc = 0") == "-1.0");
  CATCH_CHECK(text(out, "SELECT count(*) FROM samples") == "3");
  // Attention statistics follow the run's winner (the input), OUT's own rows stay.
  CATCH_CHECK(m.attn_stats.replaced == 1);
  CATCH_CHECK(m.attn_stats.added == 1);
  CATCH_CHECK(text(out, "SELECT value FROM attn_stats WHERE layer = 0") == "0.3");
  CATCH_CHECK(text(out, "SELECT count(*) FROM attn_stats") == "3");
  CATCH_CHECK(text(out, "SELECT value FROM evals") == "0.6");  // OUT's is newer
}
