// The HTML report and its SVG charts (results/report/, results/svg.h) on a fixture database: the
// sections exist, every figure the page references was written, the diagnostics summary averages
// the row's runs, and the charts put points where the layout says.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/common/error.h"
#include "core/common/registry.h"
#include "results/report/report.h"
#include "results/store.h"
#include "results/svg.h"
#include "tests/results/fixture.h"

using namespace attnbench::results;
using attnbench::results::testing::TempDir;
using attnbench::results::testing::add_run;
using attnbench::results::testing::eval;
using attnbench::results::testing::measured;
using Catch::Matchers::Contains;

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<Param> params(const std::string& variant, int seed) {
  return {{"attention.variant", variant, "string"}, {"train.seed", std::to_string(seed), "int"}};
}

// Two softmax seeds and one lazy run, all finished, plus a running lazy seed with nothing recorded.
void fill(Store& s) {
  s.upsert_sweep("demo", "demo.toml");
  add_run(s, "demo", "soft0", params("softmax", 0));
  add_run(s, "demo", "soft1", params("softmax", 1));
  add_run(s, "demo", "lazy0", params("lazy", 0));
  add_run(s, "demo", "lazy1", params("lazy", 1), RunStatus::Running);
  for (const char* id : {"soft0", "soft1", "lazy0"}) {
    s.record_evals(id, {eval("piqa", "acc", 0.60, 0.02), eval("piqa", "acc_norm", 0.62, 0.02),
                        eval("arc_easy", "acc", 0.40, 0.03)});
    std::vector<Metric> curve;
    // The trainer's key is train/loss; loss (the first design's name) is read as well.
    const std::string key = std::string(id) == "lazy0" ? "train/loss" : "loss";
    for (int step = 0; step <= 100; step += 10) curve.push_back({key, step, 10.0 / (1 + step), 0});
    s.log_metrics(id, curve);
  }
  // Model summaries (layer = head = -1) and per-layer means (head = -1).
  s.record_attn_stats("soft0", {{-1, -1, "sink_mass", -1, 0.5}, {-1, -1, "sparsity", -1, 0.0},
                                {0, -1, "sink_mass", -1, 0.4}, {1, -1, "sink_mass", -1, 0.6},
                                {0, -1, "sparsity", -1, 0.0}, {1, -1, "sparsity", -1, 0.0}});
  s.record_attn_stats("soft1", {{-1, -1, "sink_mass", -1, 0.7}, {-1, -1, "sparsity", -1, 0.0},
                                {0, -1, "sink_mass", -1, 0.6}, {1, -1, "sink_mass", -1, 0.8}});
  std::vector<AttnStat> lazy = {{-1, -1, "sink_mass", -1, 0.125}, {-1, -1, "sparsity", -1, 0.625},
                                {0, -1, "sink_mass", -1, 0.1},    {1, -1, "sink_mass", -1, 0.15},
                                {0, -1, "tau", -1, -0.9, true},   {1, -1, "tau", -1, -1.1, true},
                                // A measured statistic no list names: never a learned parameter.
                                {0, -1, "new_measure", -1, 0.3},  {1, -1, "new_measure", -1, 0.2}};
  for (int h = 0; h < 2; ++h) {
    for (int r = 0; r < 8; ++r) lazy.push_back({0, h, "distance_bias", r, -0.1 * r * (h + 1), true});
  }
  s.record_attn_stats("lazy0", lazy);
}

std::set<std::string> referenced_files(const std::string& html) {
  std::set<std::string> out;
  const std::regex src("src=\"([^\"]+)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), src); it != std::sregex_iterator(); ++it) {
    out.insert((*it)[1]);
  }
  return out;
}

// The text of one section of the page, from its opening tag to its closing one.
std::string section_of(const std::string& html, const std::string& id) {
  const size_t from = html.find("<section id=\"" + id + "\">");
  if (from == std::string::npos) return "";
  return html.substr(from, html.find("</section>", from) - from);
}

}  // namespace

CATCH_TEST_CASE("report: sections, figures and averaged statistics of a fixture sweep") {
  TempDir dir;
  Store store = Store::open(dir / "r.db");
  fill(store);
  ReportOptions o;
  o.sweep = "demo";
  o.out = dir / "report";
  HeatmapFigure missing;
  missing.run_id = missing.label = "soft0";
  missing.layer = 1;
  missing.note = "no checkpoint under runs/soft0: heatmap not computed";
  o.heatmaps.push_back(missing);
  // A computed map: the caller's PNG (any bytes here) is embedded in an SVG figure with the
  // window's tokens on both axes and a colour bar over the weights' range.
  std::filesystem::create_directories(dir / "report");
  std::ofstream(dir / "report" / "heatmap_lazy0.png", std::ios::binary) << "abcd";
  HeatmapFigure drawn;
  drawn.run_id = "lazy0";
  drawn.label = "lazy";
  drawn.file = "heatmap_lazy0.png";
  drawn.tokens = {"<|endoftext|>", " The<", " cat"};
  drawn.max_weight = 0.8;
  drawn.min_weight = -0.2;
  o.heatmaps.push_back(drawn);
  const auto page = write_report(store.db(), o);
  const std::string map = slurp(dir / "report" / "heatmap_lazy0.svg");
  CATCH_CHECK_THAT(map, Contains("href=\"data:image/png;base64,YWJjZA==\""));
  CATCH_CHECK_THAT(map, Contains(">&lt;|endoftex\u2026</text>") && Contains("> The&lt;</text>"));
  CATCH_CHECK_THAT(map, Contains("key j") && Contains("query i") && Contains("attention weight"));
  CATCH_CHECK_THAT(map, Contains(">0.8</text>") && Contains(">-0.2</text>"));  // colour bar ends
  CATCH_CHECK_THAT(map, Contains("<stop offset=\"0.0000\" stop-color=\"#08306b\"/>"));  // darkest blue on top
  CATCH_CHECK_THAT(slurp(page), Contains("<img src=\"heatmap_lazy0.svg\""));
  CATCH_REQUIRE(page == dir / "report" / "index.html");
  const std::string html = slurp(page);

  // Every section, once, in the documented order (results/report/report.h), each linked from the
  // navigation in that order.
  const std::vector<std::string> ids = {"overview", "results",  "side-by-side", "paired",        "diagnostics",
                                        "sink-rate", "loss-curves", "task-bars",     "attention",
                                        "hidden-states", "learned",  "heatmaps"};
  const std::regex section_re("<section id=\"([a-z-]+)\">"), link_re("<a href=\"#([a-z-]+)\">");
  std::vector<std::string> shown, linked;
  for (std::sregex_iterator it(html.begin(), html.end(), section_re), end; it != end; ++it) shown.push_back((*it)[1]);
  const std::string nav = html.substr(html.find("<nav>"), html.find("</nav>") - html.find("<nav>"));
  for (std::sregex_iterator it(nav.begin(), nav.end(), link_re), end; it != end; ++it) linked.push_back((*it)[1]);
  CATCH_CHECK(shown == ids);
  CATCH_CHECK(linked == ids);
  CATCH_CHECK(attnbench::registration_errors().empty());  // no two sections share an id or a position
  // What was trained comes first, from the stored configs: values the runs share once, others
  // with their run counts; the items each task scored.
  const std::string overview = section_of(html, "overview");
  CATCH_CHECK_THAT(overview, Contains("<th>attention</th><td>lazy (2 runs), softmax (2 runs)</td>"));
  CATCH_CHECK_THAT(overview, Contains("piqa 100, arc_easy 100"));
  CATCH_CHECK_THAT(overview, Contains("4 in the sweep"));
  CATCH_CHECK(html.find("<script") == std::string::npos);
  CATCH_CHECK(html.find("http://") == std::string::npos);  // nothing fetched from a network

  // Every figure the page shows exists beside it.
  const auto files = referenced_files(html);
  CATCH_CHECK(files.count("loss.svg") == 1);
  CATCH_CHECK(files.count("loss_smoothed.svg") == 1);  // the training loss's trend beside the raw steps
  CATCH_CHECK(files.count("task_bars.svg") == 1);
  CATCH_CHECK(files.count("sink_mass_per_layer.svg") == 1);
  CATCH_CHECK(files.count("sparsity_per_layer.svg") == 1);
  CATCH_CHECK(files.count("tau_per_layer.svg") == 1);
  // Drawn as learned by what the store says of each statistic, not by its name.
  CATCH_CHECK_THAT(section_of(html, "learned"), Contains("tau_per_layer.svg"));
  CATCH_CHECK(section_of(html, "learned").find("new_measure") == std::string::npos);
  CATCH_CHECK(files.count("distance_bias_row1_layer0.svg") == 1);
  for (const auto& f : files) {
    CATCH_INFO(f);
    CATCH_CHECK(std::filesystem::is_regular_file(dir / "report" / f));
  }

  // The softmax row's model sink mass is the mean of its two seeds, (0.5 + 0.7) / 2.
  CATCH_CHECK_THAT(html, Contains("<td>softmax</td><td>2</td><td class=\"num\">0.600</td>"));
  CATCH_CHECK_THAT(html, Contains("<td>lazy</td><td>1</td><td class=\"num\">0.125</td>"));
  // The missing heatmap says why.
  CATCH_CHECK_THAT(html, Contains("no checkpoint under runs/soft0: heatmap not computed"));
  // The unfinished lazy seed is not counted, and the table says so.
  CATCH_CHECK_THAT(html, Contains("running"));

  // Per-layer sink mass of softmax averages the seeds per layer: (0.4 + 0.6) / 2, (0.6 + 0.8) / 2.
  const std::string sink = slurp(dir / "report" / "sink_mass_per_layer.svg");
  CATCH_CHECK_THAT(sink, Contains(">softmax<"));
  CATCH_CHECK_THAT(sink, Contains(">lazy<"));
  // One line per row: softmax's two seeds as their mean, lazy's one finished run as itself.
  const std::string loss = slurp(dir / "report" / "loss.svg");
  CATCH_CHECK_THAT(loss, Contains(">softmax (mean of 2 seeds)<"));
  CATCH_CHECK_THAT(loss, Contains(">lazy<"));
  CATCH_CHECK(loss.find("lazy1") == std::string::npos);  // running, no metrics: no line
  const std::string bias = slurp(dir / "report" / "distance_bias_row1_layer0.svg");
  CATCH_CHECK_THAT(bias, Contains(">head 0<"));
  CATCH_CHECK_THAT(bias, Contains(">head 1<"));
}

CATCH_TEST_CASE("report: the side-by-side section puts each row's sink statistics beside its accuracy") {
  TempDir dir;
  Store store = Store::open(dir / "r.db");
  store.upsert_sweep("cures", "cures.toml");
  // softmax: two seeds with statistics and both tasks; sigmoid: one seed, no sink_rate row and no
  // arc_easy score; lazy: two seeds of which only one has statistics.
  add_run(store, "cures", "soft0", params("softmax", 0));
  add_run(store, "cures", "soft1", params("softmax", 1));
  add_run(store, "cures", "sig0", params("sigmoid", 0));
  add_run(store, "cures", "lazy0", params("lazy", 0));
  add_run(store, "cures", "lazy1", params("lazy", 1));
  store.record_evals("soft0", {eval("piqa", "acc", 0.60), eval("arc_easy", "acc", 0.40)});
  store.record_evals("soft1", {eval("piqa", "acc", 0.70), eval("arc_easy", "acc", 0.50)});
  store.record_evals("sig0", {eval("piqa", "acc", 0.50)});
  store.record_evals("lazy0", {eval("piqa", "acc", 0.62), eval("arc_easy", "acc", 0.44)});
  store.record_evals("lazy1", {eval("piqa", "acc", 0.64), eval("arc_easy", "acc", 0.46)});
  auto model = [](double sink, double rate, double sparsity) {
    return std::vector<AttnStat>{{-1, -1, "sink_mass", -1, sink}, {-1, -1, "sink_rate", -1, rate},
                                 {-1, -1, "sparsity", -1, sparsity}, {0, -1, "sink_mass", -1, 0.99}};
  };
  store.record_attn_stats("soft0", model(0.5, 0.75, 0.0));
  store.record_attn_stats("soft1", model(0.7, 0.25, 0.0));
  store.record_attn_stats("sig0", {{-1, -1, "sink_mass", -1, 0.05}, {-1, -1, "sparsity", -1, 0.1}});
  store.record_attn_stats("lazy0", model(0.125, 0.0, 0.625));

  ReportOptions o;
  o.sweep = "cures";
  o.out = dir / "report";
  const std::string html = slurp(write_report(store.db(), o));
  const std::string sec = section_of(html, "side-by-side");
  CATCH_REQUIRE_FALSE(sec.empty());
  CATCH_CHECK_THAT(html, Contains("<a href=\"#side-by-side\">"));
  CATCH_CHECK_THAT(sec, Contains("<th>row</th><th>seeds</th><th class=\"num\" title=\"mean over query "
                                 "rows of the weight on the first token\">sink mass</th>"));
  CATCH_CHECK_THAT(sec, Contains(">sink rate</th>") && Contains(">sparsity</th>") &&
                            Contains(">Avg acc ↑</th>"));
  CATCH_CHECK_THAT(sec, Contains(">piqa</th>") && Contains(">arc_easy</th>"));
  // softmax: sink mass (0.5 + 0.7) / 2 ± sqrt(0.02), rate 0.5 ± sqrt(0.125), Avg of the runs' own
  // averages 0.5 and 0.6 = 55.0 ± 7.1, piqa 65.0, arc_easy 45.0. The per-layer 0.99 is not read.
  CATCH_CHECK_THAT(sec, Contains("<tr><td>softmax</td><td>2</td><td class=\"num\">0.600 ± 0.141</td>"
                                 "<td class=\"num\">0.500 ± 0.354</td><td class=\"num\">0.000 ± 0.000</td>"
                                 "<td class=\"num\">55.0 ± 7.1</td><td class=\"num\">65.0</td>"
                                 "<td class=\"num\">45.0</td></tr>"));
  // sigmoid: no sink rate recorded, Avg over piqa alone (marked), arc_easy missing.
  CATCH_CHECK_THAT(sec, Contains("<tr><td>sigmoid</td><td>1</td><td class=\"num\">0.050</td>"
                                 "<td class=\"num missing\">—</td><td class=\"num\">0.100</td>"
                                 "<td class=\"num\">50.0*</td><td class=\"num\">50.0</td>"
                                 "<td class=\"num missing\">—</td></tr>"));
  // lazy: statistics of one of its two seeds only, said with (n=1); accuracies over both.
  CATCH_CHECK_THAT(sec, Contains("<tr><td>lazy</td><td>2</td><td class=\"num\">0.125 (n=1)</td>"
                                 "<td class=\"num\">0.000 (n=1)</td><td class=\"num\">0.625 (n=1)</td>"
                                 "<td class=\"num\">54.0 ± 1.4</td><td class=\"num\">63.0</td>"
                                 "<td class=\"num\">45.0</td></tr>"));

  // The scatter: one labelled point per row with both a sink mass and an Avg.
  CATCH_REQUIRE(referenced_files(sec).count("sink_vs_accuracy.svg") == 1);
  const std::string scatter = slurp(dir / "report" / "sink_vs_accuracy.svg");
  // softmax's two seeds give its sink mass a whisker (their std); no eval has a stderr, so no
  // point has a y whisker, and no samples give a chance line.
  CATCH_CHECK_THAT(scatter, Contains("<title>softmax: (0.6 ± 0.14, 55)</title>"));
  CATCH_CHECK_THAT(scatter, Contains("<title>sigmoid*: (0.05, 50)</title>"));
  CATCH_CHECK_THAT(scatter, Contains("<title>lazy: (0.125, 54)</title>"));
  CATCH_CHECK(scatter.find("chance") == std::string::npos);
}

// n two-choice (piqa) or four-choice (arc_easy) items, as samples: one request per choice.
std::vector<Sample> choice_samples(const std::string& task, int docs, int choices) {
  std::vector<Sample> out;
  for (int doc = 0; doc < docs; ++doc) {
    for (int c = 0; c < choices; ++c) out.push_back({task, doc, c, -1.0 - c, c == 0, c == 0, 3});
  }
  return out;
}

CATCH_TEST_CASE("report: the sink-vs-accuracy scatter has stderr whiskers and reaches chance") {
  TempDir dir;
  Store store = Store::open(dir / "r.db");
  store.upsert_sweep("chance", "chance.toml");
  add_run(store, "chance", "soft0", params("softmax", 0));
  add_run(store, "chance", "lazy0", params("lazy", 0));
  store.record_evals("soft0", {eval("piqa", "acc", 0.60, 0.02), eval("arc_easy", "acc", 0.50, 0.03)});
  store.record_evals("lazy0", {eval("piqa", "acc", 0.62, 0.02), eval("arc_easy", "acc", 0.52, 0.03)});
  for (const char* id : {"soft0", "lazy0"}) {
    store.record_samples(id, choice_samples("piqa", 4, 2));
    store.record_samples(id, choice_samples("arc_easy", 4, 4));
  }
  store.record_attn_stats("soft0", {{-1, -1, "sink_mass", -1, 0.6}});
  store.record_attn_stats("lazy0", {{-1, -1, "sink_mass", -1, 0.1}});
  ReportOptions o;
  o.sweep = "chance";
  o.out = dir / "report";
  write_report(store.db(), o);
  const std::string scatter = slurp(dir / "report" / "sink_vs_accuracy.svg");
  // Avg = (60 + 50) / 2 = 55, its stderr sqrt(2² + 3²) / 2 = 1.80 points (one seed: no x whisker).
  CATCH_CHECK_THAT(scatter, Contains("<title>softmax: (0.6, 55 ± 1.8)</title>"));
  CATCH_CHECK_THAT(scatter, Contains("<title>lazy: (0.1, 57 ± 1.8)</title>"));
  // Chance: the mean of piqa's 1/2 and arc_easy's 1/4, dashed; the y-axis reaches down to it,
  // where the points' range alone (53.2 to 58.8) would start above 50.
  CATCH_CHECK_THAT(scatter, Contains("<title>chance: 37.5</title></line>"));
  CATCH_CHECK_THAT(scatter, Contains(">40<"));
  // Two y whiskers, drawn as paths in the points' colours.
  size_t paths = 0;
  for (size_t at = scatter.find("<path d=\"M"); at != std::string::npos; at = scatter.find("<path d=\"M", at + 1)) {
    ++paths;
  }
  CATCH_CHECK(paths == 2);
}

// The published metrics of attn-stats (docs/diagnostics.md, "Published metrics") at the model
// level (sink_k, alpha_k per k) and per layer (hidden states, non-zero ratio).
std::vector<AttnStat> published(double sink1, double sink2, double rank0, double rank1) {
  std::vector<AttnStat> v = {{-1, -1, "sink_k", 1, sink1},       {-1, -1, "sink_k", 2, sink2},
                             {-1, -1, "sink_k", 3, 0.0},         {-1, -1, "alpha_k", 1, 0.5},
                             {-1, -1, "alpha_k", 2, 0.1},        {-1, -1, "alpha_k", 3, 0.05},
                             {-1, -1, "alpha_k_uniform", 1, 0.074}, {-1, -1, "alpha_k_uniform", 2, 0.06},
                             {-1, -1, "alpha_k_uniform", 3, 0.05},  {-1, -1, "sink_k_window", -1, 64},
                             {-1, -1, "sink_k_epsilon", -1, 0.3},   {0, -1, "effective_rank", -1, rank0},
                             {1, -1, "effective_rank", -1, rank1},  {0, -1, "nonzero_ratio", -1, 0.5},
                             {1, -1, "nonzero_ratio", -1, 0.25},    {0, -1, "massive_activations", -1, 2},
                             {0, -1, "top_activation", 1, 150.0},   {0, -1, "kurtosis", -1, 3.5},
                             {0, -1, "mean_cosine", -1, 0.2}};
  return v;
}

CATCH_TEST_CASE("report: Sink_k by key position, hidden states and non-zero ratio per layer") {
  TempDir dir;
  Store store = Store::open(dir / "r.db");
  store.upsert_sweep("pub", "pub.toml");
  add_run(store, "pub", "soft0", params("softmax", 0));
  add_run(store, "pub", "soft1", params("softmax", 1));
  add_run(store, "pub", "lazy0", params("lazy", 0));
  store.record_attn_stats("soft0", published(1.0, 0.5, 3, 1));
  store.record_attn_stats("soft1", published(0.5, 0.0, 5, 3));
  store.record_attn_stats("lazy0", published(0.0, 0.0, 6, 6));
  ReportOptions o;
  o.sweep = "pub";
  o.out = dir / "report";
  const std::string html = slurp(write_report(store.db(), o));

  // Sink_k: softmax averages its seeds, (1 + 0.5) / 2 and (0.5 + 0) / 2.
  const std::string sec = section_of(html, "sink-rate");
  CATCH_CHECK_THAT(sec, Contains("<th class=\"num\">Sink_1</th><th class=\"num\">Sink_2</th><th class=\"num\">Sink_3</th></tr>"));
  CATCH_CHECK_THAT(sec, Contains("<tr><td>softmax</td><td>2</td><td>64</td><td>0.3</td><td class=\"num\">0.750</td>"
                                 "<td class=\"num\">0.250</td><td class=\"num\">0.000</td></tr>"));
  CATCH_CHECK_THAT(sec, Contains("<tr><td>lazy</td><td>1</td><td>64</td><td>0.3</td><td class=\"num\">0.000</td>"));
  // The chart: k = 1..3 over the plot's x in [64, 544], y in [0, 1] over [274, 30].
  const std::string sink = slurp(dir / "report" / "sink_k.svg");
  CATCH_CHECK_THAT(sink, Contains("points=\"64.0,91.0 304.0,213.0 544.0,274.0\""));
  // alpha_k with its uniform baseline, dashed, once for the one window length.
  const std::string alpha = slurp(dir / "report" / "alpha_k.svg");
  CATCH_CHECK_THAT(alpha, Contains(">uniform, T=64<"));
  CATCH_CHECK(alpha.find("stroke-dasharray") == alpha.rfind("stroke-dasharray"));
  CATCH_CHECK(alpha.find("stroke-dasharray") != std::string::npos);

  // Hidden states per layer: softmax's effective rank (3 + 5) / 2 = 4, (1 + 3) / 2 = 2 on y in
  // [0, 6] (ticks of 2): 274 - 244 * 4/6 = 111.3, 274 - 244 * 2/6 = 192.7.
  const std::string hidden = section_of(html, "hidden-states");
  for (const char* f : {"massive_activations_per_layer.svg", "top_activation_per_layer.svg",
                        "kurtosis_per_layer.svg", "mean_cosine_per_layer.svg", "effective_rank_per_layer.svg"}) {
    CATCH_CHECK(referenced_files(hidden).count(f) == 1);
  }
  const std::string rank = slurp(dir / "report" / "effective_rank_per_layer.svg");
  CATCH_CHECK_THAT(rank, Contains("points=\"64.0,111.3 544.0,192.7\""));
  // Non-zero ratio beside sparsity in the per-layer attention section: 0.5 and 0.25 on [0, 1].
  CATCH_REQUIRE(referenced_files(section_of(html, "attention")).count("nonzero_ratio_per_layer.svg") == 1);
  CATCH_CHECK_THAT(slurp(dir / "report" / "nonzero_ratio_per_layer.svg"),
                   Contains("points=\"64.0,152.0 544.0,213.0\""));
}

CATCH_TEST_CASE("report: loss curves of several seeds are their mean with a min..max band") {
  TempDir dir;
  Store store = Store::open(dir / "r.db");
  store.upsert_sweep("bands", "bands.toml");
  add_run(store, "bands", "soft0", params("softmax", 0));
  add_run(store, "bands", "soft1", params("softmax", 1));
  add_run(store, "bands", "lazy0", params("lazy", 0));
  add_run(store, "bands", "lazy1", params("lazy", 1), RunStatus::Diverged);
  // soft0 logged a step soft1 did not reach: it is left out of the mean and the band.
  store.log_metrics("soft0", {{"train/loss", 0, 10, 0}, {"train/loss", 10, 20, 0}, {"train/loss", 20, 5, 0}});
  store.log_metrics("soft1", {{"train/loss", 0, 30, 0}, {"train/loss", 10, 40, 0}});
  store.log_metrics("lazy0", {{"train/loss", 0, 1, 0}, {"train/loss", 10, 100, 0}});
  store.log_metrics("lazy1", {{"train/loss", 0, 1, 0}});
  ReportOptions o;
  o.sweep = "bands";
  o.out = dir / "report";
  const std::string html = slurp(write_report(store.db(), o));
  CATCH_CHECK_THAT(section_of(html, "loss-curves"), Contains("min..max"));
  const std::string loss = slurp(dir / "report" / "loss.svg");
  CATCH_CHECK_THAT(loss, Contains(">softmax (mean of 2 seeds)<"));
  CATCH_CHECK_THAT(loss, Contains(">lazy<"));
  CATCH_CHECK_THAT(loss, Contains(">lazy1 (diverged)<"));  // not in the table: alone, with its status
  // log10 y over [0, 2] (losses 1..100) on [274, 30]: y = 274 - 122 log10(v); steps 0 and 10 on
  // [64, 544]. Softmax: mean 20, 30; band 10..30, 20..40 (upper edge, then the lower one back).
  const auto y = [](double v) { return fmt::format("{:.1f}", 274 - 122 * std::log10(v)); };
  CATCH_CHECK_THAT(loss, Contains("<polyline points=\"64.0," + y(20) + " 544.0," + y(30) + "\""));
  CATCH_CHECK_THAT(loss, Contains("<polygon points=\"64.0," + y(30) + " 544.0," + y(40) + " 544.0," + y(20) +
                                  " 64.0," + y(10) + "\""));
  CATCH_CHECK(y(20) == "115.3");
}

// 20 two-choice piqa items, gold = choice 0; the run gets items from..to-1 right.
std::vector<Sample> piqa_samples(int from, int to) {
  std::vector<Sample> out;
  for (int doc = 0; doc < 20; ++doc) {
    const bool ok = doc >= from && doc < to;
    out.push_back({"piqa", doc, 0, ok ? -1.0 : -2.0, ok, true, 3});
    out.push_back({"piqa", doc, 1, ok ? -2.0 : -1.0, !ok, false, 3});
  }
  return out;
}

CATCH_TEST_CASE("report: the paired-difference table against the first row or --baseline") {
  TempDir dir;
  Store store = Store::open(dir / "r.db");
  store.upsert_sweep("paired", "paired.toml");
  add_run(store, "paired", "soft0", params("softmax", 0));
  add_run(store, "paired", "lazy0", params("lazy", 0));
  // softmax gets items 0..9 right, lazy 1..13: 4 items only lazy gets right, 1 only softmax.
  store.record_evals("soft0", {eval("piqa", "acc", 0.50, 0.11)});
  store.record_evals("lazy0", {eval("piqa", "acc", 0.65, 0.11)});
  store.record_samples("soft0", piqa_samples(0, 10));
  store.record_samples("lazy0", piqa_samples(1, 14));
  ReportOptions o;
  o.sweep = "paired";
  o.out = dir / "report";

  // Default baseline: the first row. McNemar: p = 2 P(X <= 1 | n = 5, 1/2) = 2 * 6 / 32.
  std::string sec = section_of(slurp(write_report(store.db(), o)), "paired");
  CATCH_CHECK_THAT(sec, Contains("<th>unpaired se</th>"));
  CATCH_CHECK_THAT(sec, Contains("<tr><td>attention.variant=lazy</td><td>piqa</td><td>acc</td><td>McNemar exact, "
                                 "two-sided (items)</td><td>20 pairs</td><td class=\"num\">0.5</td><td class=\"num\">"
                                 "0.65</td><td class=\"num\">0.15</td><td class=\"num missing\">—</td><td class=\"num "
                                 "missing\">—</td><td class=\"num\">0.375</td>"));
  CATCH_CHECK_THAT(sec, Contains("<td>paired bootstrap, two-sided (items)</td><td>20 items</td>"));
  CATCH_CHECK_THAT(sec, Contains("baseline: attention.variant=softmax (1 finished run(s))"));
  // The per-task bars draw PIQA's chance level from the samples: two requests per item, 50%.
  CATCH_CHECK_THAT(slurp(dir / "report" / "task_bars.svg"),
                   Contains("stroke-dasharray=\"4 3\"><title>piqa: 50</title></line>"));

  // --baseline names the other row: the differences change sign.
  o.baseline = "attention.variant=lazy";
  sec = section_of(slurp(write_report(store.db(), o)), "paired");
  CATCH_CHECK_THAT(sec, Contains("<tr><td>attention.variant=softmax</td><td>piqa</td><td>acc</td><td>McNemar exact, "
                                 "two-sided (items)</td><td>20 pairs</td><td class=\"num\">0.65</td><td class=\"num\">"
                                 "0.5</td><td class=\"num\">-0.15</td>"));
  // A selector that names no row is a usage error, before the page is written.
  o.baseline = "attention.variant=alibi";
  o.out = dir / "never";
  CATCH_CHECK_THROWS_AS(write_report(store.db(), o), attnbench::UsageError);
  CATCH_CHECK_FALSE(std::filesystem::exists(dir / "never"));
}

CATCH_TEST_CASE("report: an unknown sweep is a usage error naming the sweeps") {
  TempDir dir;
  Store store = Store::open(dir / "r.db");
  fill(store);
  ReportOptions o;
  o.sweep = "demp";
  o.out = dir / "report";
  CATCH_REQUIRE_THROWS_WITH(write_report(store.db(), o), Contains("did you mean 'demo'"));
}

CATCH_TEST_CASE("report: a sweep without statistics or evals says so instead of drawing nothing") {
  TempDir dir;
  Store store = Store::open(dir / "r.db");
  store.upsert_sweep("bare", "bare.toml");
  add_run(store, "bare", "b0", params("softmax", 0));
  ReportOptions o;
  o.sweep = "bare";
  o.out = dir / "report";
  const std::string html = slurp(write_report(store.db(), o));
  CATCH_CHECK_THAT(html, Contains("No attention statistics recorded"));
  CATCH_CHECK_THAT(html, Contains("No accuracy results recorded"));
  CATCH_CHECK_THAT(html, Contains("No training loss recorded"));
  CATCH_CHECK_THAT(section_of(html, "sink-rate"), Contains("No Sink_k recorded"));
  CATCH_CHECK_THAT(section_of(html, "hidden-states"), Contains("No hidden-state statistics recorded"));
  CATCH_CHECK_THAT(section_of(html, "paired"), Contains("fewer than two rows with finished runs"));
  // Nothing to put side by side: said, and no empty table or scatter drawn.
  CATCH_CHECK_THAT(section_of(html, "side-by-side"), Contains("Nothing to compare yet"));
  CATCH_CHECK(section_of(html, "side-by-side").find("<table>") == std::string::npos);
  CATCH_CHECK(referenced_files(html).empty());
}

CATCH_TEST_CASE("report: any stored float is drawn or left out, never a crash") {
  // Before, an accuracy of +-Inf or +-1e308 ended the report in SIGSEGV: the tick list of an
  // infinite (or overflowing) range was empty and its front() read.
  const double inf = std::numeric_limits<double>::infinity();
  for (const double v : {inf, -inf, 1e308, -1e308, std::nan("")}) {
    CATCH_INFO("stored value " << v);
    TempDir dir;
    Store store = Store::open(dir / "r.db");
    fill(store);
    store.record_evals("lazy0", {eval("piqa", "acc", v, 0.02), eval("arc_easy", "acc", v, 1e308)});
    store.record_attn_stats("lazy0", {{-1, -1, "sink_mass", -1, v}, {0, -1, "sink_mass", -1, v}});
    store.log_metrics("lazy0", {{"train/loss", 50, v, 0}});
    ReportOptions o;
    o.sweep = "demo";
    o.out = dir / "report";
    CATCH_CHECK_THAT(slurp(write_report(store.db(), o)), Contains("</html>"));
  }
  for (const auto& [lo, hi] : std::vector<std::pair<double, double>>{
           {0, inf}, {-inf, inf}, {-1e308, 1e308}, {0, 1.7e308}}) {
    CATCH_INFO("range " << lo << " .. " << hi);
    CATCH_CHECK(!nice_ticks(lo, hi).empty());
  }
  BarChart b;
  b.title = "bars";
  b.groups = {"piqa"};
  b.series = {"inf", "big", "ok"};
  b.values = {{Bar{inf, 2.0}, Bar{1e308, 1e308}, Bar{50.0, 2.0}}};
  const std::string bars = render_bar_chart(b);
  CATCH_CHECK_THAT(bars, Contains("<title>ok: 50 ± 2</title>"));
  CATCH_CHECK(bars.find("<title>inf") == std::string::npos);  // not drawable: left out
  CATCH_CHECK(bars.find("<title>big") == std::string::npos);  // its whisker overflows
}

// A scatter point without whiskers.
ScatterPoint point(const std::string& label, double x, double y) {
  ScatterPoint p;
  p.label = label;
  p.x = x;
  p.y = y;
  return p;
}

CATCH_TEST_CASE("report: svg ticks, escaping and point placement") {
  const auto unit = nice_ticks(0, 1);
  CATCH_REQUIRE(unit.size() == 6);
  for (size_t i = 0; i < unit.size(); ++i) CATCH_CHECK(unit[i] == Catch::Detail::Approx(0.2 * double(i)));
  const auto t = nice_ticks(0, 1000, 5);
  CATCH_CHECK(t.front() == 0);
  CATCH_CHECK(t.back() == 1000);
  CATCH_CHECK(t[1] == 200);
  CATCH_CHECK(tick_label(0.25, 0.05) == "0.25");
  CATCH_CHECK(tick_label(200, 100) == "200");
  CATCH_CHECK(xml_escape("a<b & \"c\">") == "a&lt;b &amp; &quot;c&quot;&gt;");

  // Default layout: plot area x in [64, 544], y in [30, 274] (560 x 320, margins 64/16/30/46).
  LineChart c;
  c.title = "t";
  c.y_min = 0;
  c.y_max = 1;
  c.series.push_back({"s<1>", {{0, 0}, {5, 0.5}, {10, 1}}, false});
  const std::string svg = render_line_chart(c);
  CATCH_CHECK_THAT(svg, Contains("64.0,274.0 304.0,152.0 544.0,30.0"));
  CATCH_CHECK_THAT(svg, Contains(">s&lt;1&gt;<"));
  CATCH_CHECK(svg.rfind("</svg>\n") == svg.size() - 7);

  // Scatter: default 640 x 400, plot x in [64, 624], y in [30, 354], the data range [0, 1] inside
  // a margin of 8% of it on each side: 0 at 64 + 560 * 0.08 / 1.16, 1 at 624 - that; labels point
  // inwards.
  ScatterChart sc;
  sc.points = {point("a<b", 0, 0), point("c", 1, 1), point("nan", std::nan(""), 1)};
  const std::string dots = render_scatter_chart(sc);
  CATCH_CHECK_THAT(dots, Contains("<circle cx=\"102.6\" cy=\"331.7\""));
  CATCH_CHECK_THAT(dots, Contains("<circle cx=\"585.4\" cy=\"52.3\""));
  CATCH_CHECK_THAT(dots, Contains("text-anchor=\"start\">a&lt;b</text>"));
  CATCH_CHECK_THAT(dots, Contains("text-anchor=\"end\">c</text>"));
  CATCH_CHECK(dots.find(">nan<") == std::string::npos);  // a non-finite point is skipped
  // A second point where the first is: its label moves a line (12 px) down instead of covering it.
  sc.points = {point("a", 0, 0), point("b", 0, 0), point("c", 1, 1)};
  const std::string stacked = render_scatter_chart(sc);
  CATCH_CHECK_THAT(stacked, Contains("y=\"335.7\" text-anchor=\"start\">a</text>"));
  CATCH_CHECK_THAT(stacked, Contains("y=\"347.7\" text-anchor=\"start\">b</text>"));
  CATCH_CHECK_THAT(render_scatter_chart(ScatterChart{}), Contains("no data"));
  // Whiskers widen the range: a y whisker of 10 around 60 and 62 puts 50 and 70 on the axis, and a
  // reference below every point brings the axis down to it.
  ScatterChart errors;
  errors.points = {point("a", 0, 60), point("b", 1, 62)};
  CATCH_CHECK(render_scatter_chart(errors).find(">50<") == std::string::npos);
  errors.points[0].y_error = 10.0;
  errors.points[1].x_error = std::nan("");  // not a whisker
  const std::string wide = render_scatter_chart(errors);
  CATCH_CHECK_THAT(wide, Contains(">50<") && Contains(">70<"));
  CATCH_CHECK_THAT(wide, Contains("<title>a: (0, 60 ± 10)</title>") && Contains("<title>b: (1, 62)</title>"));
  errors.points[0].y_error.reset();
  errors.y_reference = 25.0;
  errors.y_reference_label = "chance";
  const std::string reference = render_scatter_chart(errors);
  CATCH_CHECK_THAT(reference, Contains(">30<") && Contains("<title>chance: 25</title>"));

  // Two layers: ticks at layer 0 and 1 only, not at 0.2, 0.4, ... (y kept away from those values).
  LineChart layers;
  layers.y_min = 10;
  layers.y_max = 20;
  layers.series.push_back({"r", {{0, 12}, {1, 14}}, true});
  CATCH_CHECK_THAT(render_line_chart(layers), Contains(">0.2<"));
  layers.integer_x = true;
  const std::string whole = render_line_chart(layers);
  CATCH_CHECK(whole.find(">0.2<") == std::string::npos);
  CATCH_CHECK(whole.find(">0.5<") == std::string::npos);
  CATCH_CHECK_THAT(whole, Contains(">0<") && Contains(">1<"));

  // A log-scale loss falling from 4.1 to 3.6 spans no 1-2-5 step of a decade: its ticks are the
  // range's own round values, not a single "4".
  LineChart loss;
  loss.log_y = true;
  loss.series.push_back({"loss", {{0, 4.1}, {10, 3.8}, {20, 3.6}}, false});
  const std::string log_axis = render_line_chart(loss);
  CATCH_CHECK_THAT(log_axis, Contains(">3.6<") && Contains(">3.8<") && Contains(">4.0<"));
  // A loss over 2.5 .. 10 keeps the decade's 5 and 10 and adds the integer mantissas between.
  loss.series[0].points = {{0, 10.0}, {10, 2.5}};
  CATCH_CHECK_THAT(render_line_chart(loss), Contains(">3.0<") && Contains(">5.0<") && Contains(">10<"));

  LineChart empty;
  empty.title = "nothing";
  CATCH_CHECK_THAT(render_line_chart(empty), Contains("no data"));

  BarChart b;
  b.title = "bars";
  b.groups = {"piqa"};
  b.series = {"softmax", "lazy"};
  b.values = {{Bar{50.0, 2.0}, Bar{}}};
  const std::string bars = render_bar_chart(b);
  CATCH_CHECK_THAT(bars, Contains("<title>softmax: 50 ± 2</title>"));
  CATCH_CHECK(bars.find("<title>lazy") == std::string::npos);  // missing bar: not drawn
  CATCH_CHECK_THAT(bars, Contains("stroke=\"#222\""));           // the whisker
}

// SmolLM2's 9 heads (or 12 rows) over a palette of 8 colours: the 9th series shares the 1st's
// colour and is told apart by its dash, in the chart and in its legend key.
CATCH_TEST_CASE("report: series past the palette keep apart by a dash pattern") {
  LineChart c;
  for (int h = 0; h < 9; ++h) c.series.push_back({fmt::format("head {}", h), {{0, h}, {1, h + 1.0}}, false});
  const std::string svg = render_line_chart(c);
  CATCH_CHECK(std::string(series_colour(8)) == series_colour(0));
  CATCH_CHECK(std::string(series_dash(0)).empty());
  CATCH_CHECK_FALSE(std::string(series_dash(8)).empty());
  const std::string dashed = fmt::format("stroke=\"{}\" stroke-width=\"1.5\" stroke-dasharray=\"{}\"",
                                         series_colour(8), series_dash(8));
  CATCH_CHECK_THAT(svg, Contains(dashed));
  const std::string key = fmt::format("stroke=\"{}\" stroke-width=\"2\" stroke-dasharray=\"{}\"/>"
                                      "<text x=", series_colour(8), series_dash(8));
  CATCH_CHECK_THAT(svg, Contains(key));
  // The first round of colours is drawn solid.
  CATCH_CHECK(svg.find(fmt::format("stroke=\"{}\" stroke-width=\"1.5\" stroke-dasharray", series_colour(1))) ==
              std::string::npos);
  BarChart b;
  b.groups = {"piqa"};
  for (int i = 0; i < 9; ++i) b.series.push_back(fmt::format("row {}", i));
  b.values = {std::vector<Bar>(9, Bar{50.0, std::nullopt})};
  CATCH_CHECK_THAT(render_bar_chart(b), Contains(fmt::format("stroke-dasharray=\"{}\"><title>row 8", series_dash(8))));
}

// Issue 51, items 2 and 5: a page of runs named one by one (standalone runs, no sweep) with their
// curves; a row whose attention statistics were measured otherwise (a pretrained model over
// 512-token windows of an essay beside retrofits over 128-token windows of val.bin) is marked ‡ in
// every attention section, and the note names both measurements.
CATCH_TEST_CASE("report: a page of standalone runs marks statistics measured otherwise") {
  TempDir dir;
  Store store = Store::open(dir.path() / "r.db");
  add_run(store, "", "soft0", params("softmax", 0));
  add_run(store, "", "lazy0", params("lazy", 0));
  add_run(store, "", "lazy1", params("lazy", 1));
  add_run(store, "", "other", params("alibi", 0));
  const AttnMeasurement val128 = measured(128, 8192, "val.bin");
  const AttnMeasurement essay512 = measured(512, 8192, "essay.txt");
  store.record_attn_stats("soft0", {{-1, -1, "sink_mass", -1, 0.35}, {0, -1, "sink_mass", -1, 0.10}}, essay512);
  for (const char* id : {"lazy0", "lazy1"}) {
    store.record_attn_stats(id, {{-1, -1, "sink_mass", -1, 0.43}, {0, -1, "sink_mass", -1, 0.33}}, val128);
    store.log_metrics(id, {{"train/loss", 0, 4.0, 0}, {"train/loss", 10, 3.0, 0}});
  }
  ReportOptions o;
  o.runs = {"soft0", "lazy0", "lazy1"};
  o.out = dir.path() / "page";
  const std::string html = slurp(write_report(store.db(), o));
  CATCH_CHECK_THAT(html, Contains("<h1>attnbench report: 3 runs</h1>"));
  CATCH_CHECK_THAT(section_of(html, "overview"), Contains("3 named, 2 rows in the table"));
  CATCH_CHECK(html.find("alibi") == std::string::npos);  // a run not named is not on the page
  const std::string summary = section_of(html, "diagnostics");
  CATCH_CHECK_THAT(summary, Contains("<td>softmax \u2021</td>") && Contains("<td>lazy</td>"));
  CATCH_CHECK_THAT(summary, Contains("softmax: windows of 512 tokens, 8192 tokens of essay.txt"));
  CATCH_CHECK_THAT(section_of(html, "attention"), Contains("\u2021 measured otherwise"));
  CATCH_CHECK_THAT(slurp(o.out / "sink_mass_per_layer.svg"), Contains(">softmax \u2021</text>"));
  CATCH_CHECK_THAT(slurp(o.out / "loss.svg"), Contains(">lazy (mean of 2 seeds)</text>"));  // their curves

  // Measured alike: no mark, and each attention section says how.
  o.runs = {"lazy0", "lazy1"};
  const std::string alike = slurp(write_report(store.db(), o));
  CATCH_CHECK(alike.find("\u2021") == std::string::npos);
  CATCH_CHECK_THAT(section_of(alike, "diagnostics"),
                   Contains("Attention statistics measured on windows of 128 tokens, 8192 tokens of val.bin."));
}
