// A multi-rank cell's job as the sweep sees it (harness/sweep/cell_launch.h): the commands it
// runs, the metrics and status it reads back from the run folder, the launches it refuses. The job
// itself runs end to end in tests/harness/cli/sweep_distributed.sh.
#include <torch/torch.h>  // before catch.hpp (docs/toolchain.md: glog's CHECK)

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "core/common/error.h"
#include "harness/sweep/cell_launch.h"
#include "harness/sweep/expand.h"
#include "harness/sweep/sweep_file.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace cell_launch_test {

namespace fs = std::filesystem;
using namespace attnbench;
using Catch::Matchers::Contains;

namespace {

// A fresh folder with a store holding one claimed run, "r1".
struct Fixture {
  fs::path dir;
  std::optional<results::Store> store;
  Fixture() {
    static int counter = 0;
    dir = fs::temp_directory_path() / ("attnbench-test-launch-" + std::to_string(::getpid()) + "-" +
                                       std::to_string(counter++));
    fs::remove_all(dir);
    fs::create_directories(dir / "run");
    store = results::Store::open(dir / "db.sqlite");
    results::PendingRun run;
    run.id = "r1";
    run.config_json = "{}";
    CATCH_REQUIRE(store->claim_run("", run, {}).claimed);
  }
  ~Fixture() { fs::remove_all(dir); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / "run" / name, std::ios::binary) << text;
  }
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// Unsets a variable for the scope, restoring it after.
struct WithoutEnv {
  std::string name;
  std::optional<std::string> saved;
  explicit WithoutEnv(std::string n) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) saved = v;
    ::unsetenv(name.c_str());
  }
  ~WithoutEnv() {
    if (saved) ::setenv(name.c_str(), saved->c_str(), 1);
  }
};

}  // namespace

CATCH_TEST_CASE("metrics.jsonl is upserted into the store, a line cut short is skipped") {
  Fixture f;
  f.write("metrics.jsonl",
          "{\"key\":\"train/loss\",\"step\":1,\"value\":3.5,\"time\":1732190000.5}\n"
          "{\"key\":\"train/loss\",\"step\":2,\"value\":null,\"time\":1732190001.0}\n"
          "{\"key\":\"val/loss\",\"step\":2,\"value\":3.25,\"time\":1732190001.5}\n"
          "{\"key\":\"train/loss\",\"st");  // the writer was killed here
  const fs::path jsonl = f.dir / "run" / "metrics.jsonl";
  CATCH_CHECK(sweep::ingest_metrics(jsonl, *f.store, "r1") == 3);
  CATCH_CHECK(sweep::ingest_metrics(jsonl, *f.store, "r1") == 3);  // again: upserts, no duplicates
  auto loss = f.store->metrics("r1", "train/loss");
  CATCH_REQUIRE(loss.size() == 2);
  CATCH_CHECK(loss[0].step == 1);
  CATCH_CHECK(loss[0].value == 3.5);
  CATCH_CHECK(loss[0].time == 1732190000.5);  // the time it was logged, not the ingestion's
  CATCH_CHECK(std::isnan(loss[1].value));       // null: a non-finite loss
  CATCH_CHECK(f.store->metrics("r1", "val/loss").size() == 1);
  // No file (the job died before logging): nothing to store.
  CATCH_CHECK(sweep::ingest_metrics(f.dir / "none.jsonl", *f.store, "r1") == 0);
  // A complete line that is not a metric is an error naming the file and the line.
  f.write("metrics.jsonl", "{\"key\":\"train/loss\",\"step\":1,\"value\":1}\n[1, 2]\n");
  CATCH_CHECK_THAT(error_of([&] { sweep::ingest_metrics(jsonl, *f.store, "r1"); }),
                   Contains("metrics.jsonl:2: not a metric line"));
}

CATCH_TEST_CASE("status.json is read back as the training result") {
  Fixture f;
  CATCH_CHECK_FALSE(sweep::read_status(f.dir / "run"));
  f.write("status.json",
          "{\"status\": \"diverged\", \"step\": 7, \"train_loss\": null, \"val_loss\": 2.5}\n");
  auto r = sweep::read_status(f.dir / "run");
  CATCH_REQUIRE(r);
  CATCH_CHECK(r->status == "diverged");
  CATCH_CHECK(r->step == 7);
  CATCH_CHECK(std::isnan(r->train_loss));
  CATCH_CHECK(r->val_loss == 2.5);
  f.write("status.json", "{\"status\": \"fini");  // not the trainer's (it renames a whole file)
  CATCH_CHECK_FALSE(sweep::read_status(f.dir / "run"));
}

CATCH_TEST_CASE("the ranks' command: train on the cell's JSON config, srun in front under Slurm") {
  sweep::CellLaunch l;
  l.gpus_per_cell = 4;
  l.nodes_per_cell = 2;
  l.dist_timeout_s = 60;
  l.executable = "/opt/ab/attnbench";
  const auto train = sweep::train_command(l, "/runs/x/cell-config.json", "/runs/x");
  CATCH_CHECK(train == std::vector<std::string>{"/opt/ab/attnbench", "train", "--config",
                                                "/runs/x/cell-config.json", "--out", "/runs/x",
                                                "--quiet", "--dist-timeout", "60"});
  Fixture f;  // a folder for a stand-in srun on PATH
  const fs::path srun = f.dir / "srun";
  std::ofstream(srun) << "#!/bin/sh\n";
  fs::permissions(srun, fs::perms::owner_all);
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", (f.dir.string() + ":" + path).c_str(), 1);
  const auto args = sweep::srun_command(l, train);
  ::setenv("PATH", path.c_str(), 1);
  CATCH_REQUIRE(args.size() == 4 + train.size());
  CATCH_CHECK(args[0] == srun.string());
  CATCH_CHECK(args[1] == "--nodes=2");
  CATCH_CHECK(args[2] == "--ntasks-per-node=4");
  CATCH_CHECK(args[3] == "--kill-on-bad-exit=1");
  CATCH_CHECK(args[4] == "/opt/ab/attnbench");
}

CATCH_TEST_CASE("launches that cannot run are refused before any work") {
  WithoutEnv no_slurm("SLURM_JOB_ID");
  sweep::CellLaunch l;
  CATCH_CHECK(error_of([&] { sweep::check_cell_launch(l, 4, {}); }) == "(no error)");  // 1 x 1
  l.gpus_per_cell = 0;
  CATCH_CHECK_THAT(error_of([&] { sweep::check_rank_counts(l); }),
                   Contains("--gpus-per-cell must be at least 1"));
  l.gpus_per_cell = 1;
  l.nodes_per_cell = 2;
  CATCH_CHECK_THAT(error_of([&] { sweep::check_cell_launch(l, 1, {}); }),
                   Contains("--nodes-per-cell 2") && Contains("SLURM_JOB_ID is not set"));
  l.nodes_per_cell = 1;
  l.gpus_per_cell = 2;
  CATCH_CHECK_THAT(error_of([&] { sweep::check_cell_launch(l, 3, {}); }),
                   Contains("--jobs 3 cannot be combined with 2 ranks per cell"));
  // A cell of batch 4 without accumulation splits over 2 or 4 ranks, not over 3.
  Fixture f;
  std::ofstream(f.dir / "base.toml") << "[model]\ncontext_length = 32\n[train]\nbatch_size = 4\n"
                                        "device = \"cpu\"\n";
  std::ofstream(f.dir / "s.toml") << "[sweep]\nname = \"t\"\nbase = \"base.toml\"\n";
  const sweep::Expansion e = sweep::expand(sweep::parse_sweep_file(f.dir / "s.toml"));
  CATCH_CHECK(error_of([&] { sweep::check_cell_launch(l, 1, {&e.cells[0]}); }) == "(no error)");
  l.gpus_per_cell = 3;
  CATCH_CHECK_THAT(error_of([&] { sweep::check_cell_launch(l, 1, {&e.cells[0]}); }),
                   Contains("cell ") && Contains("3 rank(s)") &&
                       Contains("cannot be split evenly over 3 ranks"));
}

}  // namespace cell_launch_test
