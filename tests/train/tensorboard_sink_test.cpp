// Training metrics in TensorBoard event files (train/tensorboard_sink.h): the sink on its own, and
// a tiny run killed after a checkpoint and resumed, whose event files, read as TensorBoard reads
// them (a SessionLog START drops every earlier event from its step on), hold exactly what
// metrics.jsonl holds.
#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include "train/tensorboard_sink.h"
#include "train/trainer.h"
#include "tests/tensorboard_records.h"
#include "tests/train/train_fixture.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace tensorboard_sink_test {

using namespace attnbench;
namespace fs = std::filesystem;
using Point = std::tuple<std::string, int64_t, float>;  // tag, step, value

namespace {

// "tag@step=value", the float written exactly (9 significant digits), for Catch to compare.
std::vector<std::string> text(const std::vector<Point>& points) {
  std::vector<std::string> out;
  for (const auto& [tag, step, value] : points) {
    out.push_back(tag + "@" + std::to_string(step) + "=" + fmt::format("{:.9g}", value));
  }
  return out;
}

// The folder's scalars as TensorBoard's EventAccumulator keeps them: files in name order, each
// SessionLog START dropping what came before at or after its step (_CheckForRestartAndMaybePurge).
std::vector<Point> tensorboard_view(const fs::path& dir) {
  std::vector<Point> kept;
  for (const fs::path& file : testing::event_files(dir)) {
    const auto events = testing::read_events(file);  // both CRCs of every record checked
    CATCH_REQUIRE(!events.empty());
    CATCH_CHECK(events[0].file_version == "brain.Event:2");
    for (const auto& e : events) {
      if (e.session_status == 1) {
        kept.erase(std::remove_if(kept.begin(), kept.end(),
                                  [&](const Point& p) { return std::get<1>(p) >= e.step; }),
                   kept.end());
      }
      if (e.has_scalar) kept.emplace_back(e.tag, e.step, e.value);
    }
  }
  return kept;
}

// metrics.jsonl's lines as the scalars TensorBoard stores (simple_value is a float).
std::vector<Point> jsonl_points(const fs::path& run_dir) {
  std::vector<Point> out;
  std::ifstream in(run_dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    const auto value = static_cast<float>(j["value"].get<double>());
    out.emplace_back(j["key"], j["step"].get<int64_t>(), value);
  }
  return out;
}

}  // namespace

CATCH_TEST_CASE("the TensorBoard sink writes a file per session, each opened by a START") {
  test::ScratchDir dir;
  {
    train::TensorBoardSink sink(dir.path(), 1);
    CATCH_CHECK(testing::event_files(dir.path()).empty());  // nothing until the first metric
    sink.log_metric("train/loss", 1, 2.5);
    // Flushed at once: readable while the sink is still open.
    CATCH_REQUIRE(testing::event_files(dir.path()).size() == 1);
    CATCH_CHECK(testing::read_events(testing::event_files(dir.path())[0]).size() == 3);
    sink.log_metric("train/loss", 2, 2.25);
    sink.log_metric("train/loss", 3, 2.0);
  }
  train::TensorBoardSink resumed(dir.path(), 3);  // resumed from a checkpoint at step 2
  resumed.log_metric("train/loss", 3, 1.75);
  const auto files = testing::event_files(dir.path());
  CATCH_REQUIRE(files.size() == 2);
  const auto second = testing::read_events(files[1]);
  CATCH_REQUIRE(second.size() == 3);
  CATCH_CHECK(second[1].session_status == 1);
  CATCH_CHECK(second[1].step == 3);
  CATCH_CHECK(second[2].tag == "train/loss");
  CATCH_CHECK(text(tensorboard_view(dir.path())) ==
              std::vector<std::string>{"train/loss@1=2.5", "train/loss@2=2.25", "train/loss@3=1.75"});
}

CATCH_TEST_CASE("a killed and resumed run's event files show each step once, as metrics.jsonl") {
  test::ScratchDir dir;
  test::CopyTask task;
  task.write(dir.path(), 500, 50);
  auto cfg = test::copy_task_config(dir.path(), task, "softmax",
                                    {"train.steps=12", "train.eval_interval=4",
                                     "train.checkpoint_interval=5", "train.log_interval=2"});
  train::TrainOptions opts;
  opts.quiet = true;
  int polls = 0;
  opts.should_stop = [&]() -> bool {  // killed at step 8, after the step-5 checkpoint
    if (++polls == 8) throw std::runtime_error("simulated kill");
    return false;
  };
  const fs::path run = dir.path() / "run";
  CATCH_REQUIRE_THROWS_WITH(train::train_run(cfg, run, nullptr, opts), "simulated kill");
  opts.should_stop = nullptr;
  CATCH_REQUIRE(train::train_run(cfg, run, nullptr, opts).status == "finished");

  CATCH_REQUIRE(testing::event_files(run).size() == 2);
  const auto resumed = testing::read_events(testing::event_files(run)[1]);
  CATCH_CHECK(resumed[1].session_status == 1);
  CATCH_CHECK(resumed[1].step == 6);  // the first step after the checkpoint
  const std::vector<Point> view = tensorboard_view(run);
  CATCH_CHECK(text(view) == text(jsonl_points(run)));
  std::set<std::pair<std::string, int64_t>> seen;
  std::map<std::string, int> per_tag;
  for (const auto& [tag, step, value] : view) {
    CATCH_CHECK(seen.emplace(tag, step).second);  // no step twice
    ++per_tag[tag];
  }
  CATCH_CHECK(per_tag["train/loss"] == 12);
  CATCH_CHECK(per_tag["val/loss"] == 4);  // steps 0 (the model it starts from), 4, 8 and 12
  CATCH_CHECK(per_tag["train/tokens_per_s"] == 6);
}

}  // namespace tensorboard_sink_test
