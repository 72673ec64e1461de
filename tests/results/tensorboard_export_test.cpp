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

  // A non-empty --out is refused without --force, and its earlier export replaced with it.
  CATCH_CHECK_THROWS_AS(export_tensorboard(store, request), attnbench::UsageError);
  std::ofstream(dir / "tb" / "a1" / "events.out.tfevents.1.host.1.0") << "x";  // an older export
  request.force = true;
  CATCH_CHECK(export_tensorboard(store, request).size() == 2);
  CATCH_CHECK(!fs::exists(dir / "tb" / "a1" / "events.out.tfevents.1.host.1.0"));
  CATCH_CHECK(scalars(dir / "tb" / "a1").size() > 0);
  // --force replaces only what export-tb wrote: a file of the user's beside it is named, and kept.
  std::ofstream(dir / "tb" / "notes.txt") << "mine";
  CATCH_CHECK_THROWS_WITH(export_tensorboard(store, request),
                          Catch::Contains("holds notes.txt, which results export-tb does not write"));
  CATCH_CHECK(fs::exists(dir / "tb" / "notes.txt"));
  CATCH_CHECK(fs::exists(dir / "tb" / "a1"));
  request.sweep = "nope";
  CATCH_CHECK_THROWS_AS(export_tensorboard(store, request), attnbench::UsageError);
}

CATCH_TEST_CASE("export-tb --force never empties a run folder, a project or the working folder") {
  TempDir tmp;
  const fs::path dir = tmp.path();
  Store store = Store::open(dir / "r.db");
  fill(store);
  // A run folder: its checkpoint and metrics are not export-tb's.
  fs::create_directories(dir / "run" / "checkpoint");
  std::ofstream(dir / "run" / "checkpoint" / "model.pt") << "weights";
  std::ofstream(dir / "run" / "metrics.jsonl") << "{}";
  TensorBoardExport request{"mini", dir / "run", true};
  CATCH_CHECK_THROWS_AS(check_export_folder(request), attnbench::UsageError);
  CATCH_CHECK_THROWS_AS(export_tensorboard(store, request), attnbench::UsageError);
  CATCH_CHECK(fs::exists(dir / "run" / "checkpoint" / "model.pt"));
  CATCH_CHECK(fs::exists(dir / "run" / "metrics.jsonl"));
  // The working folder (--out .), or a folder holding it, is never replaced, even when empty of
  // anything else but export-tb's own folders.
  const fs::path cwd = fs::current_path();
  fs::create_directories(dir / "work" / "inner");
  fs::current_path(dir / "work" / "inner");
  for (const fs::path& out : {fs::path("."), fs::path(".."), dir / "work"}) {
    CATCH_INFO("--out " << out);
    CATCH_CHECK_THROWS_WITH(check_export_folder({"mini", out, true}),
                            Catch::Contains("is the working folder or holds it"));
  }
  fs::current_path(cwd);
  CATCH_CHECK(fs::exists(dir / "work" / "inner"));
}
