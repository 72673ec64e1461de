// A sweep cell's evaluation is `attnbench eval`'s (one plan, evals/eval_plan.h): a cell trained and
// scored by run_cell stores the very rows and samples, bit for bit, that `attnbench eval
// --log-samples --db` stores for its checkpoint with no other flag (the run's per-task limits and
// its several lengths included), and the cell's model shares contexts through its decoding state
// (prefix reuse computes fewer input positions than full rows). And cells run one
// after the other in one process do not accumulate memory: each one's peak is about the first's.
// Needs the real tasks and the GPT-2 tokenizer ($ATTNBENCH_DATA: skipped with a warning when
// unset).
#include <torch/torch.h>  // before catch.hpp (docs/toolchain.md: glog's CHECK)

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <sqlite3.h>
#include <unistd.h>

#include "core/common/memory.h"
#include "core/data/shard.h"
#include "evals/eval_plan.h"
#include "harness/sweep/cell_run.h"
#include "harness/sweep/expand.h"
#include "harness/sweep/sweep_file.h"
#include "results/sqlite.h"
#include "results/store.h"
#include "tests/test_skip.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace cell_eval_test {

namespace fs = std::filesystem;
using namespace attnbench;

namespace {

struct Scratch {
  fs::path dir;
  Scratch() {
    dir = fs::temp_directory_path() / ("attnbench-test-cell-eval-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
};

// A sweep of tiny softmax models trained 2 steps on random GPT-2 tokens (one cell per seed, of
// `batch` windows of `context` tokens), scored on tasks of the three output types (multiple
// choice, loglikelihood, rolling) at `limit` items each.
sweep::SweepFile tiny_sweep(const fs::path& dir, const std::string& seeds, int64_t context,
                            int64_t batch, const std::string& tasks, int64_t limit,
                            const std::string& more = "", const std::string& eval = "") {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> token(0, 50256);
  std::vector<uint32_t> tokens(20000);
  for (auto& t : tokens) t = token(rng);
  data::write_shard(dir / "train.bin", tokens);
  data::write_shard(dir / "val.bin", std::vector<uint32_t>(tokens.begin(), tokens.begin() + 4000));
  std::ofstream(dir / "base.toml")
      << "[model]\npreset = \"tiny\"\ncontext_length = " << context << "\n"
      << "[data]\ntrain = \"" << (dir / "train.bin").string() << "\"\nval = \""
      << (dir / "val.bin").string() << "\"\n"
      << "[train]\nsteps = 2\nbatch_size = " << batch << "\nwarmup_steps = 1\neval_interval = 0\n"
         "eval_tokens = 512\ncheckpoint_interval = 100\nthreads = 1\n"
      << (eval.empty() ? "" : "[eval]\n" + eval + "\n");
  std::ofstream(dir / "s.toml") << "[sweep]\nname = \"eq\"\nbase = \"base.toml\"\nseeds = "
                                << seeds << "\ntasks = " << tasks << "\nlimit = " << limit << "\n"
                                << more << "\n";
  return sweep::parse_sweep_file(dir / "s.toml");
}

// A column's exact value: integers and text as they are, REAL as its bits (hexadecimal
// floating point), NULL as "NULL": equal strings mean equal values.
std::string exact(results::Stmt& st, int c) {
  if (st.is_null(c)) return "NULL";
  if (sqlite3_column_type(st.handle(), c) == SQLITE_FLOAT) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%a", st.real(c));
    return buf;
  }
  return st.text(c);
}

// Every stored eval row and sample of `run`, one string each.
std::vector<std::string> stored_rows(const fs::path& db_path, const std::string& run) {
  results::Db db(db_path, /*read_only=*/true);
  std::vector<std::string> out;
  for (const char* sql :
       {"SELECT task, metric, value, stderr, n, item_limit, protocol_version, bos FROM evals "
        "WHERE run = ? ORDER BY task, metric",
        "SELECT task, doc, request, loglikelihood, is_greedy, is_gold, tokens FROM samples "
        "WHERE run = ? ORDER BY task, doc, request"}) {
    results::Stmt st = db.prepare(sql);
    st.bind(1, run);
    while (st.step()) {
      std::string row;
      for (int c = 0; c < st.columns(); ++c) row += exact(st, c) + " ";
      out.push_back(row);
    }
  }
  return out;
}

}  // namespace

CATCH_TEST_CASE("a sweep cell stores the rows and samples attnbench eval stores, bit for bit") {
  const auto data_root = attnbench::testing::data_root_or_skip("the sweep-cell evaluation check");
  if (!data_root) return;
  const std::string data = data_root->string();
  Scratch s;
  // Per-task limits (WikiText's 1 document beside 3 items of the others) and a second length.
  const sweep::SweepFile file = tiny_sweep(
      s.dir, "[0]", 128, 2, "[\"copa\", \"lambada_openai\", \"wikitext\"]", 3,
      "task_limits = { wikitext = 1 }", "contexts = [64]");
  const sweep::Expansion e = sweep::expand(file);
  CATCH_REQUIRE(e.cells.size() == 1);
  const sweep::Cell& cell = e.cells[0];
  {
    results::Store store = results::Store::open(s.dir / "cell.db");
    sweep::CellRunOptions o;
    o.runs_dir = s.dir / "runs";
    o.data_root = data;
    o.quiet = true;
    CATCH_REQUIRE(sweep::run_cell(file, cell, store, o) == sweep::CellOutcome::Finished);
  }
  const fs::path run_dir = s.dir / "runs" / cell.id;
  const std::string cmd = std::string(ATTNBENCH_BINARY) + " eval --checkpoint " + run_dir.string() +
                          " --threads 1 --log-samples --db " +
                          (s.dir / "eval.db").string() + " > " + (s.dir / "eval.log").string() +
                          " 2>&1";
  CATCH_REQUIRE(std::system(cmd.c_str()) == 0);

  const std::vector<std::string> from_cell = stored_rows(s.dir / "cell.db", cell.id);
  const std::vector<std::string> from_eval = stored_rows(s.dir / "eval.db", cell.id);
  CATCH_CHECK(from_cell.size() > 20);  // metrics of three tasks and a sample per request
  CATCH_CHECK(from_cell == from_eval);
  const auto has = [&](const std::string& prefix) {
    return std::any_of(from_cell.begin(), from_cell.end(),
                       [&](const std::string& r) { return r.rfind(prefix, 0) == 0; });
  };
  CATCH_CHECK(has("copa@64 "));                 // the second length, stored under its own name
  CATCH_CHECK(has("wikitext word_perplexity"));  // and the first
  // `eval --limit` says otherwise: every task at that limit, refused over the sweep's rows (a
  // second scoring with another identity never replaces the first).
  const std::string other = std::string(ATTNBENCH_BINARY) + " eval --checkpoint " + run_dir.string() +
                            " --tasks wikitext --limit 3 --threads 1 --db " + (s.dir / "eval.db").string() +
                            " > " + (s.dir / "other.log").string() + " 2>&1";
  CATCH_CHECK(std::system(other.c_str()) != 0);
  CATCH_CHECK(stored_rows(s.dir / "eval.db", cell.id) == from_eval);

  // The cell's model has a decoding state: COPA's two answers share their context, computed once.
  const evals::ScoredModel scored = evals::load_scored_model(run_dir, "", "train.device", data);
  evals::EvalRequest request;
  request.tasks = {"copa"};
  std::vector<evals::EvalGroup> plan = evals::plan_evaluation(scored, cell.config.eval, request, data);
  int64_t tokens = 0, tokens_full = 0;
  CATCH_REQUIRE(evals::run_evaluation(
      plan, evals::text_encoder(scored.tokenizer()), evals::evaluation_options(scored, cell.config.eval),
      [&](const evals::LoadedTask&, const evals::TaskReport& r) {
        tokens += r.forward.tokens;
        tokens_full += r.forward.tokens_full;
      }));
  CATCH_CHECK(tokens_full > 0);
  CATCH_CHECK(tokens < tokens_full);
}

CATCH_TEST_CASE("cells run in one process each peak at about the first cell's memory") {
  const auto data_root = attnbench::testing::data_root_or_skip("the sweep-cell memory check");
  if (!data_root) return;
  const std::string data = data_root->string();
  if (!reset_peak_rss() || peak_rss_bytes() < 0) {
    attnbench::testing::skip_test("this system does not report or reset the peak resident set");
    return;
  }
  Scratch s;
  // The quickstart's cell shapes (4 windows of 256 tokens), three seeds, evaluated on tasks whose
  // batches differ in shape: what made a process's memory grow cell after cell (docs/sweeps.md,
  // "Memory").
  const sweep::SweepFile file = tiny_sweep(
      s.dir, "[0, 1, 2]", 256, 4, "[\"copa\", \"hellaswag\", \"lambada_openai\"]", 20);
  const sweep::Expansion e = sweep::expand(file);
  CATCH_REQUIRE(e.cells.size() == 3);
  results::Store store = results::Store::open(s.dir / "cells.db");
  sweep::CellRunOptions o;
  o.runs_dir = s.dir / "runs";
  o.data_root = data;
  o.quiet = true;
  std::vector<double> peaks;
  for (const sweep::Cell& cell : e.cells) {
    CATCH_REQUIRE(sweep::run_cell(file, cell, store, o) == sweep::CellOutcome::Finished);
    const std::vector<results::Metric> peak = store.metrics(cell.id, "system/peak_rss_mib");
    CATCH_REQUIRE(peak.size() == 1);
    peaks.push_back(peak[0].value);
  }
  CATCH_INFO("peak resident MiB per cell: " << peaks[0] << ", " << peaks[1] << ", " << peaks[2]);
  CATCH_CHECK(peaks[1] < 1.25 * peaks[0]);
  CATCH_CHECK(peaks[2] < 1.25 * peaks[0]);
}

}  // namespace cell_eval_test
