// Runs an edited sweep file no longer lists (harness/sweep/prune.h): found, named, taken out of the
// sweep with their rows kept; [[pretrained]] runs never; a prune that would empty the sweep refused.
#include <torch/torch.h>  // before catch.hpp (docs/toolchain.md: glog's CHECK)

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "core/common/error.h"
#include "harness/sweep/prune.h"
#include "results/runs.h"
#include "results/store.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace prune_test {

namespace fs = std::filesystem;
using namespace attnbench;

namespace {

struct Dir {
  fs::path path = fs::temp_directory_path() / ("attnbench-test-prune-" + std::to_string(::getpid()));
  Dir() {
    fs::remove_all(path);
    fs::create_directories(path);
    std::ofstream(path / "base.toml") << "[model]\npreset = \"tiny\"\ncontext_length = 32\n[train]\nsteps = 2\n";
  }
  ~Dir() { fs::remove_all(path); }
  sweep::SweepFile sweep_file(const std::string& variants) const {
    std::ofstream(path / "s.toml") << "[sweep]\nname = \"t\"\nbase = \"base.toml\"\n[grid]\n"
                                      "\"attention.variant\" = [" + variants + "]\n";
    return sweep::parse_sweep_file(path / "s.toml");
  }
};

results::PendingRun pending(const std::string& id, const std::string& cell) {
  results::PendingRun r;
  r.id = id;
  r.cell = cell;
  r.config_json = "{}";
  return r;
}

std::vector<std::string> member_ids(const fs::path& db) {
  std::vector<std::string> out;
  for (const auto& m : results::sweep_members(results::Store::open(db, true).db(), "t")) out.push_back(m.id);
  return out;
}

}  // namespace

CATCH_TEST_CASE("prune: runs an edited sweep no longer lists leave the sweep, their rows stay") {
  Dir dir;
  const fs::path db = dir.path / "r.db";
  const sweep::SweepFile before = dir.sweep_file("\"softmax\", \"alibi\"");
  const sweep::Expansion e_before = sweep::expand(before);
  {
    results::Store store = results::Store::open(db);
    store.upsert_sweep("t", before.file.string());
    std::vector<results::PendingRun> runs;
    for (const auto& c : e_before.cells) runs.push_back(pending(c.id, c.label));
    runs.push_back(pending("pre123", "pretrained=gpt2"));  // its id comes from weights: kept
    store.add_pending_runs("t", runs);
  }
  const std::string alibi = e_before.cells[1].id;
  CATCH_CHECK(sweep::stale_runs(before, e_before, db).empty());

  const sweep::SweepFile after = dir.sweep_file("\"softmax\"");  // alibi dropped from the file
  const sweep::Expansion e_after = sweep::expand(after);
  const auto stale = sweep::stale_runs(after, e_after, db);
  CATCH_REQUIRE(stale.size() == 1);
  CATCH_CHECK(stale[0].id == alibi);
  CATCH_CHECK(stale[0].status == "pending");
  CATCH_CHECK(sweep::prune_sweep(after, e_after, db) == 0);
  CATCH_CHECK(member_ids(db) == std::vector<std::string>{e_after.cells[0].id, "pre123"});
  CATCH_CHECK(results::Store::open(db, true).run(alibi).has_value());  // the row stays
  CATCH_CHECK(sweep::stale_runs(after, e_after, db).empty());

  // A file none of whose cells is in the sweep (e.g. runs made with --set): refused, nothing removed.
  const sweep::SweepFile other = dir.sweep_file("\"lazy\"");
  CATCH_CHECK_THROWS_AS(sweep::prune_sweep(other, sweep::expand(other), db), UsageError);
  CATCH_CHECK(member_ids(db).size() == 2);
  // No database, or no such sweep in it: nothing is stale.
  CATCH_CHECK(sweep::stale_runs(after, e_after, dir.path / "none.db").empty());
}

}  // namespace prune_test
