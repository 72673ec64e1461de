// `results export-tb` (results/tensorboard_export.h): a folder per run holding one event file with
// its curves at their steps, and its evals and scalar attention statistics at its last step.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>

#include "core/common/error.h"
#include "results/tensorboard_export.h"
#include "tests/results/fixture.h"
#include "tests/tensorboard_records.h"

using namespace attnbench::results;
using namespace attnbench::results::testing;
namespace fs = std::filesystem;

namespace {

// tag@step -> value of the one event file in `folder`.
std::map<std::string, float> scalars(const fs::path& folder) {
  const auto files = attnbench::testing::event_files(folder);
  CATCH_REQUIRE(files.size() == 1);
  const auto events = attnbench::testing::read_events(files[0]);
  CATCH_REQUIRE(!events.empty());
  CATCH_CHECK(events[0].file_version == "brain.Event:2");
  std::map<std::string, float> out;
  for (const auto& e : events) {
    if (e.has_scalar) out[e.tag + "@" + std::to_string(e.step)] = e.value;
  }
  return out;
}

void fill(Store& store) {
  store.upsert_sweep("mini", "sweeps/mini.toml");
  add_run(store, "mini", "a1", {});
  add_run(store, "mini", "b/2", {});  // not a file name; members are in (created, id) order
  store.log_metrics("a1", {{"train/loss", 10, 3.5, 1.0}, {"train/loss", 20, 2.5, 2.0},
                           {"val/loss", 20, 2.75, 2.0}});
  store.record_evals("a1", {eval("piqa", "acc", 0.625)});
  AttnStat head;
  head.layer = 1;
  head.head = 0;
  head.stat = "sink_mass";
  head.value = 0.5;
  AttnStat model = head;  // layer = head = -1: the model as a whole
  model.layer = model.head = -1;
  model.value = 0.25;
  AttnStat profile = head;
  profile.stat = "distance_bias";
  profile.index = 3;
  store.record_attn_stats("a1", {head, model, profile});
}

}  // namespace

CATCH_TEST_CASE("export-tb writes each run's curves, evals and attention statistics") {
  TempDir dir;
  {
    Store store = Store::open(dir / "r.db");
    fill(store);
  }
  Store store = Store::open(dir / "r.db", true);
  TensorBoardExport request{"mini", dir / "tb", false};
  const auto done = export_tensorboard(store, request);
  CATCH_REQUIRE(done.size() == 2);
  CATCH_CHECK(done[0].folder == dir / "tb" / "a1");
  CATCH_CHECK(done[0].scalars == 6);
  CATCH_CHECK(done[1].folder == dir / "tb" / "b_2");
  CATCH_CHECK(scalars(dir / "tb" / "a1") ==
              std::map<std::string, float>{{"train/loss@10", 3.5f},
                                           {"train/loss@20", 2.5f},
                                           {"val/loss@20", 2.75f},
                                           {"eval/piqa/acc@20", 0.625f},
                                           {"attn/sink_mass@20", 0.25f},
                                           {"attn/sink_mass/layer1/head0@20", 0.5f}});
  CATCH_CHECK(scalars(dir / "tb" / "b_2").empty());

  // A non-empty --out is refused without --force, and replaced with it.
  CATCH_CHECK_THROWS_AS(export_tensorboard(store, request), attnbench::UsageError);
  std::ofstream(dir / "tb" / "stale.txt") << "x";
  request.force = true;
  CATCH_CHECK(export_tensorboard(store, request).size() == 2);
  CATCH_CHECK(!fs::exists(dir / "tb" / "stale.txt"));
  request.sweep = "nope";
  CATCH_CHECK_THROWS_AS(export_tensorboard(store, request), attnbench::UsageError);
}
