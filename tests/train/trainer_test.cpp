// Training end to end on the synthetic copy task (tests/train/train_fixture.h): learning, exact
// resume, the divergence guard, checkpoint integrity, metrics.
#include <torch/torch.h>

#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "train/trainer.h"
#include "model/checkpoint_dir.h"
#include "model/checkpoint_model.h"
#include "tests/train/train_fixture.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace trainer_test {

using namespace attnbench;
namespace fs = std::filesystem;

namespace {

// Every value of `key` in run_dir/metrics.jsonl, in file order, with its step.
std::vector<std::pair<int64_t, double>> read_metric(const fs::path& run_dir, const std::string& key) {
  std::vector<std::pair<int64_t, double>> out;
  std::ifstream in(run_dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["key"] == key) out.emplace_back(j["step"].get<int64_t>(), j["value"].get<double>());
  }
  return out;
}

train::TrainOptions quiet() {
  train::TrainOptions o;
  o.quiet = true;
  return o;
}

struct RecordingSink : train::MetricSink {
  std::vector<std::tuple<std::string, int64_t, double>> logged;
  void log_metric(const std::string& key, int64_t step, double value) override {
    logged.emplace_back(key, step, value);
  }
};

}  // namespace

// The thresholds are fixed from the task's entropy, not from a previous run: a model that copies
// ends near floor_loss() (1.23 nats for L = 8, 16 symbols) plus the window-edge cost (copies whose
// source lies before the window start: about L * L / (2L + 2) of T = 64 targets, +0.15 nats), so
// ~1.39; one that does not copy cannot go below unigram_loss() (2.46). Requiring val loss < 1.6
// means most of the copy half is predicted.
static void check_learns(const std::string& variant) {
  test::ScratchDir dir;
  test::CopyTask task;
  task.write(dir.path());
  auto cfg = test::copy_task_config(dir.path(), task, variant,
                                    {"train.steps=300", "train.warmup_steps=20", "train.lr=1e-2"});
  RecordingSink sink;
  auto r = train::train_run(cfg, dir.path() / "run", &sink, quiet());
  CATCH_REQUIRE(r.status == "finished");
  CATCH_REQUIRE(r.step == 300);
  CATCH_CHECK(task.floor_loss() < 1.6);
  CATCH_CHECK(task.unigram_loss() > 2.0);
  CATCH_CHECK(r.val_loss < 1.6);
  CATCH_CHECK(r.val_loss > task.floor_loss() - 0.05);  // cannot beat the entropy of the data
  // The sink saw what metrics.jsonl holds.
  auto losses = read_metric(dir.path() / "run", "train/loss");
  CATCH_REQUIRE(losses.size() == 300);
  int64_t sink_losses = 0;
  for (auto& [k, step, v] : sink.logged) sink_losses += k == "train/loss";
  CATCH_CHECK(sink_losses == 300);
  CATCH_CHECK(read_metric(dir.path() / "run", "val/loss").size() == 1);
}

CATCH_TEST_CASE("a tiny softmax model learns the copy task") { check_learns("softmax"); }
CATCH_TEST_CASE("a tiny lazy model learns the copy task") { check_learns("lazy"); }

CATCH_TEST_CASE("stopping and resuming reproduces the uninterrupted losses exactly") {
  test::ScratchDir dir;
  test::CopyTask task;
  task.write(dir.path(), 500, 50);
  // Accumulation (2 micro-batches) and periodic validation are part of what must resume exactly.
  auto cfg = test::copy_task_config(dir.path(), task, "lazy",
                                    {"train.steps=12", "train.batch_tokens=1024",
                                     "train.eval_interval=4", "train.checkpoint_interval=5"});
  auto straight = train::train_run(cfg, dir.path() / "straight", nullptr, quiet());
  CATCH_REQUIRE(straight.status == "finished");

  CATCH_SECTION("graceful stop (Ctrl-C) at step 7, then resume") {
    int polls = 0;
    auto opts = quiet();
    opts.should_stop = [&] { return ++polls == 7; };
    auto first = train::train_run(cfg, dir.path() / "resumed", nullptr, opts);
    CATCH_REQUIRE(first.status == "interrupted");
    CATCH_REQUIRE(first.step == 7);
    auto second = train::train_run(cfg, dir.path() / "resumed", nullptr, quiet());
    CATCH_REQUIRE(second.status == "finished");
    CATCH_CHECK(second.val_loss == straight.val_loss);
  }
  CATCH_SECTION("killed at step 8 (after the step-5 checkpoint), then resume") {
    // An exception out of the loop leaves the run folder as a kill would: the step-5 checkpoint
    // and metrics logged up to step 8.
    int polls = 0;
    auto opts = quiet();
    opts.should_stop = [&]() -> bool {
      if (++polls == 8) throw std::runtime_error("simulated kill");
      return false;
    };
    CATCH_REQUIRE_THROWS_WITH(train::train_run(cfg, dir.path() / "resumed", nullptr, opts),
                              "simulated kill");
    CATCH_REQUIRE(model::load_model(dir.path() / "resumed").step == 5);
    auto second = train::train_run(cfg, dir.path() / "resumed", nullptr, quiet());
    CATCH_REQUIRE(second.status == "finished");
    CATCH_CHECK(second.val_loss == straight.val_loss);
  }
  // Bit-identical losses, each step logged once, and identical final weights.
  for (const char* key : {"train/loss", "train/grad_norm", "val/loss"}) {
    CATCH_CHECK(read_metric(dir.path() / "resumed", key) == read_metric(dir.path() / "straight", key));
  }
  auto a = model::load_model(dir.path() / "straight");
  auto b = model::load_model(dir.path() / "resumed");
  CATCH_REQUIRE(a.step == 12);
  CATCH_REQUIRE(b.step == 12);
  auto pa = a.model->named_parameters(), pb = b.model->named_parameters();
  CATCH_REQUIRE(pa.size() == pb.size());
  for (auto& item : pa) CATCH_CHECK(torch::equal(item.value(), pb[item.key()]));
}

CATCH_TEST_CASE("a resumed run with the same config continues, a different config is refused") {
  test::ScratchDir dir;
  test::CopyTask task;
  task.write(dir.path(), 300, 50);
  auto cfg = test::copy_task_config(dir.path(), task, "softmax", {"train.steps=3"});
  CATCH_REQUIRE(train::train_run(cfg, dir.path() / "run", nullptr, quiet()).status == "finished");
  // Finished: running again does no work and reports the same result.
  auto again = train::train_run(cfg, dir.path() / "run", nullptr, quiet());
  CATCH_CHECK(again.status == "finished");
  CATCH_CHECK(again.step == 3);
  auto other = test::copy_task_config(dir.path(), task, "softmax", {"train.steps=3", "train.lr=1e-3"});
  CATCH_REQUIRE_THROWS_WITH(train::train_run(other, dir.path() / "run", nullptr, quiet()),
                            Catch::Matchers::Contains("holds a checkpoint of a different run"));
}

CATCH_TEST_CASE("a resume refuses training data that changed since the checkpoint in length or in contents") {
  test::ScratchDir dir;
  test::CopyTask task;
  task.write(dir.path(), 300, 50);
  auto cfg = test::copy_task_config(dir.path(), task, "softmax", {"train.steps=6"});
  int polls = 0;
  auto stop_at_2 = quiet();
  stop_at_2.should_stop = [&] { return ++polls == 2; };
  CATCH_REQUIRE(train::train_run(cfg, dir.path() / "run", nullptr, stop_at_2).status == "interrupted");
  const fs::path train_bin = dir.path() / "train.bin";
  const auto original = task.documents(300, 1);

  // Other documents of the same lengths: the same number of window starts, other tokens.
  const auto other = task.documents(300, 7);
  CATCH_REQUIRE(other.size() == original.size());
  CATCH_REQUIRE(other != original);
  data::write_shard(train_bin, other);
  CATCH_REQUIRE_THROWS_WITH(train::train_run(cfg, dir.path() / "run", nullptr, quiet()),
                            Catch::Matchers::Contains("changed since the checkpoint") &&
                                Catch::Matchers::Contains("their contents: xxh3"));
  // Fewer documents: the number of window starts differs.
  data::write_shard(train_bin, task.documents(200, 1));
  CATCH_REQUIRE_THROWS_WITH(train::train_run(cfg, dir.path() / "run", nullptr, quiet()),
                            Catch::Matchers::Contains("window starts then"));
  // The original data back: the run resumes and finishes.
  data::write_shard(train_bin, original);
  const auto resumed = train::train_run(cfg, dir.path() / "run", nullptr, quiet());
  CATCH_CHECK(resumed.status == "finished");
  CATCH_CHECK(resumed.step == 6);
}

CATCH_TEST_CASE("a non-finite loss or gradient stops the run as diverged, keeping the last good checkpoint") {
  test::ScratchDir dir;
  test::CopyTask task;
  task.write(dir.path(), 300, 50);
  // The largest learning rate the config accepts, without warmup or clipping: AdamW's updates move
  // every weight by ~lr, and within a few steps the activations or gradients overflow float32.
  auto cfg = test::copy_task_config(dir.path(), task, "softmax",
                                    {"train.steps=50", "train.lr=1000", "train.warmup_steps=0",
                                     "train.checkpoint_interval=1", "train.grad_clip=0"});
  auto r = train::train_run(cfg, dir.path() / "run", nullptr, quiet());
  CATCH_REQUIRE(r.status == "diverged");
  CATCH_CHECK(r.step >= 1);  // the first step was finite and checkpointed
  CATCH_CHECK(r.step < 50);
  // The checkpoint is the one of the last finite step, loads, and holds finite weights.
  auto loaded = model::load_model(dir.path() / "run");
  CATCH_CHECK(loaded.step == r.step);
  for (auto& p : loaded.model->parameters()) CATCH_CHECK(torch::isfinite(p).all().item<bool>());
  auto status = nlohmann::json::parse(std::ifstream(dir.path() / "run" / "status.json"));
  CATCH_CHECK(status["status"] == "diverged");
}

CATCH_TEST_CASE("a truncated or incomplete checkpoint is detected, never loaded") {
  test::ScratchDir dir;
  test::CopyTask task;
  task.write(dir.path(), 300, 50);
  auto cfg = test::copy_task_config(dir.path(), task, "softmax", {"train.steps=2"});
  fs::path run = dir.path() / "run";
  CATCH_REQUIRE(train::train_run(cfg, run, nullptr, quiet()).status == "finished");
  fs::path ckpt = run / "checkpoint";
  CATCH_REQUIRE(fs::is_regular_file(ckpt / "MANIFEST.json"));

  CATCH_SECTION("truncated model file") {
    fs::resize_file(ckpt / "model.pt", fs::file_size(ckpt / "model.pt") / 2);
    CATCH_REQUIRE_THROWS_WITH(model::load_model(run),
                              Catch::Matchers::Contains("model.pt is") &&
                                  Catch::Matchers::Contains("truncated"));
    CATCH_REQUIRE_THROWS_AS(train::train_run(cfg, run, nullptr, quiet()), UsageError);
  }
  CATCH_SECTION("same size, different bytes") {
    {
      // Flip every bit of one byte: writing a fixed value left the file unchanged whenever the byte
      // already held it (offset 100 can fall on a zip header's time stamp).
      std::fstream f(ckpt / "optimizer.pt", std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(100);
      const char old_byte = static_cast<char>(f.get());
      f.seekp(100);
      f.put(static_cast<char>(~old_byte));
    }
    CATCH_REQUIRE_THROWS_WITH(train::train_run(cfg, run, nullptr, quiet()),
                              Catch::Matchers::Contains("optimizer.pt does not match its checksum"));
  }
  CATCH_SECTION("manifest missing (a write that never completed)") {
    fs::remove(ckpt / "MANIFEST.json");
    CATCH_REQUIRE_THROWS_WITH(model::load_model(run),
                              Catch::Matchers::Contains("MANIFEST.json is missing"));
  }
}

CATCH_TEST_CASE("a kill between the two renames of a checkpoint swap leaves a loadable one") {
  test::ScratchDir dir;
  test::CopyTask task;
  task.write(dir.path(), 300, 50);
  auto cfg = test::copy_task_config(dir.path(), task, "softmax", {"train.steps=2"});
  fs::path run = dir.path() / "run";
  CATCH_REQUIRE(train::train_run(cfg, run, nullptr, quiet()).status == "finished");
  // The state publish_checkpoint passes through: current moved to .prev, new one still staged.
  fs::rename(run / "checkpoint", run / "checkpoint.prev");
  fs::create_directories(run / "checkpoint.tmp");
  CATCH_CHECK(model::find_checkpoint(run) == run / "checkpoint.prev");
  CATCH_CHECK(model::load_model(run).step == 2);
}

CATCH_TEST_CASE("bad training inputs are rejected before any work") {
  test::ScratchDir dir;
  test::CopyTask task;
  task.write(dir.path(), 300, 50);
  fs::path run = dir.path() / "run";
  CATCH_SECTION("token ids outside the vocabulary") {
    auto cfg = test::copy_task_config(dir.path(), task, "softmax", {"model.vocab_size=10"});
    CATCH_REQUIRE_THROWS_WITH(train::train_run(cfg, run, nullptr, quiet()),
                              Catch::Matchers::Contains("outside the vocabulary"));
  }
  CATCH_SECTION("a shard shorter than one window") {
    data::write_shard(dir.path() / "short.bin", {0, 1, 2});
    auto cfg = test::copy_task_config(dir.path(), task, "softmax",
                                      {"data.val=" + (dir.path() / "short.bin").string()});
    CATCH_REQUIRE_THROWS_WITH(train::train_run(cfg, run, nullptr, quiet()),
                              Catch::Matchers::Contains("fewer than one window"));
  }
  CATCH_SECTION("accumulation that does not divide (config built in code)") {
    auto cfg = test::copy_task_config(dir.path(), task, "softmax");
    cfg.train.batch_tokens = 1000;
    CATCH_REQUIRE_THROWS_WITH(train::train_run(cfg, run, nullptr, quiet()),
                              Catch::Matchers::Contains("must be a multiple of"));
  }
  CATCH_CHECK_FALSE(fs::exists(run));
}

}  // namespace trainer_test
