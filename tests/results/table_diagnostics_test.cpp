// The sweep table's attention-diagnostics columns: model-level attn_stats rows (layer = head = -1)
// shown as sink mass and sparsity, averaged over a row's runs, never marked best, never in Avg.
#include <catch2/catch.hpp>

#include <cmath>

#include "results/query.h"
#include "results/table.h"
#include "tests/results/fixture.h"

using namespace attnbench::results;
using attnbench::results::testing::add_run;
using attnbench::results::testing::eval;
using attnbench::results::testing::measured;
using attnbench::results::testing::TempDir;
using Catch::Matchers::Contains;
using Approx = Catch::Detail::Approx;

CATCH_TEST_CASE("table: sink mass and sparsity columns from model-level attention statistics") {
  TempDir dir;
  Store store = Store::open(dir.path() / "r.db");
  auto params = [](const std::string& variant, int seed) {
    return std::vector<Param>{{"attention.variant", variant, "string"},
                              {"train.seed", std::to_string(seed), "int"}};
  };
  add_run(store, "s", "soft0", params("softmax", 0));
  add_run(store, "s", "lazy0", params("lazy", 0));
  add_run(store, "s", "lazy1", params("lazy", 1));
  for (auto id : {"soft0", "lazy0", "lazy1"}) store.record_evals(id, {eval("copa", "acc", 0.5, 0.05)});
  // Model-level rows (layer = head = -1) feed the columns; per-layer rows must not.
  store.record_attn_stats("soft0", {{-1, -1, "sink_mass", -1, 0.40}, {-1, -1, "sparsity", -1, 0.0},
                                    {0, 1, "sink_mass", -1, 0.99}});
  store.record_attn_stats("lazy0", {{-1, -1, "sink_mass", -1, 0.02}, {-1, -1, "sparsity", -1, 0.50}});
  store.record_attn_stats("lazy1", {{-1, -1, "sink_mass", -1, 0.04}, {-1, -1, "sparsity", -1, 0.60}});

  TableRequest req;
  req.sweep = "s";
  ResultTable t = build_table(store.db(), req);
  CATCH_REQUIRE(t.columns.size() == 3);
  CATCH_CHECK(t.columns[1].task == "attention");
  CATCH_CHECK(t.columns[1].metric == "sink_mass");
  CATCH_CHECK(t.columns[2].metric == "sparsity");
  CATCH_CHECK(t.columns[1].diagnostic);
  CATCH_CHECK_FALSE(t.columns[1].in_average);
  CATCH_REQUIRE(t.rows.size() == 2);
  const Row& soft = t.rows[0];
  const Row& lazy = t.rows[1];
  CATCH_CHECK(std::abs(soft.cells[1].mean - 0.40) < 1e-12);  // not 0.99: per-layer rows ignored
  CATCH_CHECK(std::abs(lazy.cells[1].mean - 0.03) < 1e-12);
  CATCH_CHECK(std::abs(lazy.cells[2].mean - 0.55) < 1e-12);
  CATCH_CHECK(std::abs(*lazy.cells[2].std - std::sqrt(0.005)) < 1e-12);  // sample std of .5, .6
  CATCH_CHECK_FALSE(soft.cells[1].best);
  CATCH_CHECK_FALSE(lazy.cells[1].best);
  CATCH_CHECK(std::abs(soft.avg->mean - 0.5) < 1e-12);  // Avg over copa only
  std::string md = render_table(t, "md");
  CATCH_CHECK_THAT(md, Contains("sink mass") && Contains("0.030") && Contains("0.550"));
  CATCH_CHECK_THAT(md, Contains("not in Avg"));
}

// Issue 51's misreading: Lazy at tau +-0.008 zeroes weights already below 1e-4, so its sparsity
// (exact zeros) reads 0.107 beside softmax's 0 while the share of weights that matter is the same.
// The nonzero_ratio column beside it (weights above 1e-6) shows that, and the legend says so.
CATCH_TEST_CASE("table: sparsity stands beside the non-zero ratio, which counts negligible weights") {
  TempDir dir;
  Store store = Store::open(dir.path() / "r.db");
  add_run(store, "s", "soft0", {{"attention.variant", "softmax", "string"}, {"train.seed", "0", "int"}});
  add_run(store, "s", "lazy0", {{"attention.variant", "lazy", "string"}, {"train.seed", "0", "int"}});
  for (auto id : {"soft0", "lazy0"}) store.record_evals(id, {eval("copa", "acc", 0.5, 0.05)});
  store.record_attn_stats("soft0", {{-1, -1, "sink_mass", -1, 0.35}, {-1, -1, "sparsity", -1, 0.0},
                                    {-1, -1, "nonzero_ratio", -1, 0.41}});
  store.record_attn_stats("lazy0", {{-1, -1, "sink_mass", -1, 0.35}, {-1, -1, "sparsity", -1, 0.107},
                                    {-1, -1, "nonzero_ratio", -1, 0.41}});
  TableRequest req;
  req.sweep = "s";
  const ResultTable t = build_table(store.db(), req);
  CATCH_REQUIRE(t.columns.size() == 4);  // copa acc, sink mass, sparsity, non-zero ratio
  CATCH_CHECK(t.columns[2].metric == "sparsity");
  CATCH_CHECK(t.columns[3].metric == "nonzero_ratio");
  CATCH_CHECK(t.columns[3].diagnostic);
  CATCH_CHECK(t.rows[0].cells[3].mean == Approx(t.rows[1].cells[3].mean));
  const std::string md = render_table(t, "md");
  CATCH_CHECK_THAT(md, Contains("0.107") && Contains("0.410"));
  CATCH_CHECK_THAT(md, Contains("zeroed only weights already near 0"));
}

CATCH_TEST_CASE("table: Gu's sink rate column and the sink mass's uniform-attention reference") {
  TempDir dir;
  Store store = Store::open(dir.path() / "r.db");
  add_run(store, "s", "soft0", {{"attention.variant", "softmax", "string"}, {"train.seed", "0", "int"}});
  store.record_evals("soft0", {eval("copa", "acc", 0.5, 0.05)});
  // Sink_k at k = 1 is Gu et al.'s sink rate; k = 2 is not a column. The sink mass measured in
  // windows of T = 4 tokens; Sink_k in Gu's shorter ones (T = 2), which the reference ignores.
  store.record_attn_stats("soft0", {{-1, -1, "sink_mass", -1, 0.30},
                                    {-1, -1, "sink_k", 1, 0.75},
                                    {-1, -1, "sink_k", 2, 0.10},
                                    {-1, -1, "sink_k_window", -1, 2}},
                          measured(4, 8, "val.bin"));
  TableRequest req;
  req.sweep = "s";
  const ResultTable t = build_table(store.db(), req);
  CATCH_REQUIRE(t.columns.size() == 3);  // copa acc, sink mass, Gu sink rate
  CATCH_CHECK(t.columns[2].metric == "gu_sink_rate");
  CATCH_CHECK(t.columns[2].diagnostic);
  CATCH_CHECK(t.rows[0].cells[2].mean == Approx(0.75));
  // Uniform attention over 4 keys: (1 + 1/2 + 1/3 + 1/4) / 4 = 25/48 = 0.521.
  const std::string md = render_table(t, "md");
  CATCH_CHECK_THAT(md, Contains("sink mass reference: uniform attention over windows of T tokens gives "
                                "H_T / T: 0.521 at T = 4; softmax without a sink stays near it"));
  CATCH_CHECK_THAT(md, Contains("gu_sink_rate: Gu et al.'s sink rate"));
}

CATCH_TEST_CASE("table: attention statistics measured differently are marked, alike are named") {
  TempDir dir;
  Store store = Store::open(dir.path() / "r.db");
  add_run(store, "s", "soft0", {{"attention.variant", "softmax", "string"}, {"train.seed", "0", "int"}});
  add_run(store, "s", "lazy0", {{"attention.variant", "lazy", "string"}, {"train.seed", "0", "int"}});
  add_run(store, "s", "lazy1", {{"attention.variant", "lazy", "string"}, {"train.seed", "1", "int"}});
  for (auto id : {"soft0", "lazy0", "lazy1"}) store.record_evals(id, {eval("copa", "acc", 0.5, 0.05)});
  const AttnMeasurement val128 = measured(128, 8192, "val.bin");
  const AttnMeasurement essay512 = measured(512, 8192, "essay.txt");
  store.record_attn_stats("soft0", {{-1, -1, "sink_mass", -1, 0.35}}, essay512);
  store.record_attn_stats("lazy0", {{-1, -1, "sink_mass", -1, 0.43}}, val128);
  store.record_attn_stats("lazy1", {{-1, -1, "sink_mass", -1, 0.41}}, val128);
  TableRequest req;
  req.sweep = "s";
  ResultTable t = build_table(store.db(), req);
  CATCH_REQUIRE(t.columns.size() == 2);
  CATCH_CHECK(t.rows[0].cells[1].other_scoring);  // softmax: 512-token windows of another text
  CATCH_CHECK_FALSE(t.rows[1].cells[1].other_scoring);
  std::string md = render_table(t, "md");
  CATCH_CHECK_THAT(md, Contains("attention sink_mass: runs scored differently") &&
                           Contains("windows of 512 tokens, 8192 tokens of essay.txt (1 run)") &&
                           Contains("windows of 128 tokens, 8192 tokens of val.bin (2 runs)"));

  // Measured alike: no mark, and the table says how.
  req.where = {{"attention.variant", "lazy"}};
  t = build_table(store.db(), req);
  CATCH_CHECK_FALSE(t.rows[0].cells[1].other_scoring);
  CATCH_CHECK_THAT(render_table(t, "md"),
                   Contains("attention statistics measured on windows of 128 tokens, 8192 tokens of "
                            "val.bin"));
}
