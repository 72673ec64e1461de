// The paper-style table on a fixture database whose expected numbers are worked out by hand below.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/common/error.h"
#include "results/query.h"
#include "results/table.h"
#include "tests/results/fixture.h"

using namespace attnbench;
using namespace attnbench::results;
using attnbench::results::testing::add_run;
using attnbench::results::testing::eval;
using attnbench::results::testing::TempDir;
using Catch::Matchers::Contains;
using Approx = Catch::Detail::Approx;

namespace {

std::vector<Param> params(const std::string& variant, const std::string& renormalize, int seed,
                          const std::string& train = "shards/main") {
  std::vector<Param> p = {{"attention.variant", variant, "string"},
                          {"attention.position", variant == "alibi" ? "alibi" : "rope", "string"},
                          {"model.preset", "tiny", "string"},
                          {"train.seed", std::to_string(seed), "int"},
                          {"data.train", train, "string"}};
  if (!renormalize.empty()) p.push_back({"attention.renormalize", renormalize, "bool"});
  return p;
}

// Sweep "abl". Tasks are first recorded in the order piqa, winogrande, wikitext.
//   softmax  seeds 0,1,2: piqa acc_norm .50 .52 .54 (stderr .07 each), acc .60 .62 .64;
//                         winogrande acc .50 .51 .52 (stderr .01); wikitext 30, 32 (seed 2 none)
//   alibi    seeds 0,1:   piqa acc_norm .55 .57 (stderr .01), acc .65 .67; no winogrande;
//                         wikitext 28, 30; data.train has a quote in it
//   elastic renormalize=false: seed 0 finished (piqa .40 / acc .41, winogrande .45, wikitext 40),
//                         seed 1 diverged (no evals)
//   elastic renormalize=true:  seed 0 still running
void build_fixture(Store& s) {
  s.upsert_sweep("abl", "sweeps/abl.toml");
  const double norm[] = {0.50, 0.52, 0.54}, acc[] = {0.60, 0.62, 0.64}, wino[] = {0.50, 0.51, 0.52};
  for (int seed = 0; seed < 3; ++seed) {
    std::string id = "s" + std::to_string(seed);
    add_run(s, "abl", id, params("softmax", "", seed));
    s.record_evals(id, {eval("piqa", "acc", acc[seed], 0.07), eval("piqa", "acc_norm", norm[seed], 0.07)});
    s.record_evals(id, {eval("winogrande", "acc", wino[seed], 0.01)});
    if (seed < 2) s.record_evals(id, {eval("wikitext", "word_perplexity", 30.0 + 2 * seed)});
  }
  for (int seed = 0; seed < 2; ++seed) {
    std::string id = "a" + std::to_string(seed);
    add_run(s, "abl", id, params("alibi", "", seed, "shards/it's here"));
    s.record_evals(id, {eval("piqa", "acc", 0.65 + 0.02 * seed, 0.01),
                        eval("piqa", "acc_norm", 0.55 + 0.02 * seed, 0.01)});
    s.record_evals(id, {eval("wikitext", "word_perplexity", 28.0 + 2 * seed)});
  }
  add_run(s, "abl", "e0", params("elastic", "false", 0));
  s.record_evals("e0", {eval("piqa", "acc", 0.41, 0.01), eval("piqa", "acc_norm", 0.40, 0.01)});
  s.record_evals("e0", {eval("winogrande", "acc", 0.45, 0.01)});
  s.record_evals("e0", {eval("wikitext", "word_perplexity", 40.0)});
  add_run(s, "abl", "e1", params("elastic", "false", 1), RunStatus::Diverged);
  add_run(s, "abl", "r0", params("elastic", "true", 0), RunStatus::Running);
}

struct Fixture {
  TempDir dir;
  Store store = Store::open(dir / "r.db");
  Fixture() { build_fixture(store); }
  ResultTable table(TableRequest r = {}) {
    if (r.sweep.empty()) r.sweep = "abl";
    return build_table(store.db(), r);
  }
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

CATCH_TEST_CASE("table: default rows, columns, mean, sample std, n and Avg") {
  Fixture f;
  ResultTable t = f.table();
  // attention.position only restates the variant, model.preset and data.train do not split any
  // variant, train.seed is the replicate: the rows are variant x renormalize.
  CATCH_REQUIRE(t.row_keys == std::vector<std::string>{"attention.variant", "attention.renormalize"});
  CATCH_REQUIRE(t.columns.size() == 3);
  CATCH_CHECK(t.columns[0].task == "piqa");
  CATCH_CHECK(t.columns[0].metric == "acc_norm");  // auto: acc_norm where the task has it
  CATCH_CHECK(t.columns[1].metric == "acc");       // winogrande has no acc_norm
  CATCH_CHECK(t.columns[2].metric == "word_perplexity");
  CATCH_CHECK(t.columns[2].lower_is_better);
  CATCH_CHECK_FALSE(t.columns[2].in_average);
  CATCH_REQUIRE(t.rows.size() == 4);  // creation order, not alphabetical
  CATCH_CHECK(t.rows[0].keys == std::vector<std::string>{"softmax", ""});
  CATCH_CHECK(t.rows[1].keys == std::vector<std::string>{"alibi", ""});
  CATCH_CHECK(t.rows[2].keys == std::vector<std::string>{"elastic", "false"});
  CATCH_CHECK(t.rows[3].keys == std::vector<std::string>{"elastic", "true"});

  const Row& soft = t.rows[0];
  CATCH_CHECK(soft.n == 3);
  CATCH_CHECK(soft.cells[0].mean == Approx(0.52));
  CATCH_CHECK(*soft.cells[0].std == Approx(0.02));  // sample std of .50 .52 .54
  CATCH_CHECK(*soft.cells[0].std_error == Approx(std::sqrt(3 * 0.07 * 0.07) / 3));
  CATCH_CHECK(soft.cells[2].n == 2);                         // seed 2 has no wikitext
  CATCH_CHECK(soft.cells[2].mean == Approx(31.0));
  CATCH_CHECK(*soft.cells[2].std == Approx(std::sqrt(2.0)));
  CATCH_REQUIRE(soft.avg);
  CATCH_CHECK(soft.avg->complete());
  CATCH_CHECK(soft.avg->mean == Approx(0.515));      // (.52 + .51) / 2
  CATCH_CHECK(*soft.avg->std == Approx(0.015));      // std of per-seed averages .50 .515 .53

  const Row& alibi = t.rows[1];
  CATCH_CHECK(alibi.cells[0].mean == Approx(0.56));
  CATCH_CHECK(alibi.cells[1].n == 0);  // winogrande never evaluated: missing, not 0
  CATCH_REQUIRE(alibi.avg);
  CATCH_CHECK_FALSE(alibi.avg->complete());
  CATCH_CHECK(alibi.avg->tasks_present == 1);
  CATCH_CHECK_FALSE(alibi.avg->std);

  CATCH_CHECK(t.rows[2].n == 1);  // the diverged seed is not averaged in
  CATCH_CHECK_FALSE(t.rows[2].cells[0].std);
  CATCH_CHECK(t.rows[2].note == "1 diverged: not included");
  CATCH_CHECK(t.rows[3].n == 0);
  CATCH_CHECK_FALSE(t.rows[3].avg);
  CATCH_CHECK(t.rows[3].note == "1 running: not included");
}

CATCH_TEST_CASE("table: the best row, and rows within the combined stderr of it") {
  Fixture f;
  ResultTable t = f.table();
  // piqa: alibi .56 is best; softmax .52 is .04 below, combined se = sqrt(.0404^2 + .00707^2)
  // = .041 > .04: not distinguishable. elastic .40 is far below.
  CATCH_CHECK(t.rows[1].cells[0].best);
  CATCH_CHECK(t.rows[0].cells[0].within_std_error);
  CATCH_CHECK_FALSE(t.rows[2].cells[0].within_std_error);
  // winogrande: softmax .51 best, elastic .45 outside sqrt(.00577^2 + .01^2) = .0115.
  CATCH_CHECK(t.rows[0].cells[1].best);
  CATCH_CHECK_FALSE(t.rows[2].cells[1].within_std_error);
  // wikitext: lower is better; no stderr recorded so nothing is marked as a tie.
  CATCH_CHECK(t.rows[1].cells[2].best);
  CATCH_CHECK_FALSE(t.rows[0].cells[2].within_std_error);
}

CATCH_TEST_CASE("table: markdown") {
  Fixture f;
  std::string md = render_table(f.table(), "md");
  auto lines = lines_of(md);
  CATCH_REQUIRE(lines.size() > 6);
  CATCH_CHECK(lines[0] == "| attention.variant | attention.renormalize | n | piqa acc_norm ↑ | "
                          "winogrande acc ↑ | wikitext word_perplexity ↓ | Avg ↑ |");
  CATCH_CHECK(lines[2] == "| softmax | — | 3 | 52.0 ± 2.0 † | **51.0 ± 1.0** | 31.00 ± 1.41 (n=2) | 51.5 ± 1.5 |");
  CATCH_CHECK(lines[3] == "| alibi | — | 2 | **56.0 ± 1.4** | — | **29.00 ± 1.41** | 56.0* |");
  CATCH_CHECK(lines[4] == "| elastic | false | 1 | 40.0 | 45.0 | 40.00 | 42.5 |");
  CATCH_CHECK(lines[5] == "| elastic | true | 0 | — | — | — | — |");
  CATCH_CHECK_THAT(md, Contains("†: not distinguishable from the bold best"));
  CATCH_CHECK_THAT(md, Contains("*: Avg over the paper's tasks present only"));
  CATCH_CHECK_THAT(md, Contains("attention.variant=elastic, attention.renormalize=true: 1 running: not included"));
  CATCH_CHECK_THAT(md, Contains("no recorded stderr"));
  CATCH_CHECK_THAT(md, Contains("(n=k)"));
}

CATCH_TEST_CASE("table: csv has raw values and empty fields for missing cells") {
  Fixture f;
  auto lines = lines_of(render_table(f.table(), "csv"));
  CATCH_REQUIRE(lines.size() == 5);
  CATCH_CHECK(lines[0].rfind("attention.variant,attention.renormalize,n,piqa/acc_norm,piqa/acc_norm:std,"
                             "piqa/acc_norm:n,piqa/acc_norm:stderr,piqa/acc_norm:vs_best,winogrande/acc,", 0) == 0);
  auto fields = [](const std::string& l) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : l) {
      if (c == ',') {
        out.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    out.push_back(cur);
    return out;
  };
  auto soft = fields(lines[1]);
  CATCH_CHECK(soft[0] == "softmax");
  CATCH_CHECK(soft[1] == "");
  CATCH_CHECK(soft[2] == "3");
  CATCH_CHECK(std::stod(soft[3]) == Approx(0.52));
  CATCH_CHECK(std::stod(soft[4]) == Approx(0.02));
  CATCH_CHECK(soft[7] == "within_stderr");
  auto alibi = fields(lines[2]);
  CATCH_CHECK(alibi[7] == "best");
  CATCH_CHECK(alibi[8] == "");   // winogrande mean: missing, not 0
  CATCH_CHECK(alibi[10] == "0"); // n = 0 runs
  CATCH_CHECK(std::stod(alibi[18]) == Approx(0.56));  // avg over the one column present
  CATCH_CHECK(alibi[20] == "1/2");
  CATCH_CHECK(alibi[21] == "false");
  CATCH_CHECK(alibi[22] == "a0 a1");
}

CATCH_TEST_CASE("table: latex") {
  Fixture f;
  std::string tex = render_table(f.table(), "latex");
  CATCH_CHECK_THAT(tex, Contains("\\begin{tabular}{llrrrrr}"));
  CATCH_CHECK_THAT(tex, Contains("\\toprule"));
  CATCH_CHECK_THAT(tex, Contains("wikitext word\\_perplexity $\\downarrow$"));
  CATCH_CHECK_THAT(tex, Contains("softmax & --- & 3 & 52.0{\\scriptsize$\\pm$2.0}$^\\dagger$ & "
                                 "\\textbf{51.0}{\\scriptsize$\\pm$1.0} & "
                                 "31.00{\\scriptsize$\\pm$1.41}{\\scriptsize (n=2)} & "
                                 "51.5{\\scriptsize$\\pm$1.5} \\\\"));
  CATCH_CHECK_THAT(tex, Contains("alibi & --- & 2 & \\textbf{56.0}{\\scriptsize$\\pm$1.4} & --- & "
                                 "\\textbf{29.00}{\\scriptsize$\\pm$1.41} & 56.0$^*$ \\\\"));
  CATCH_CHECK_THAT(tex, Contains("\\bottomrule"));
}

CATCH_TEST_CASE("table: json") {
  Fixture f;
  auto j = nlohmann::json::parse(render_table(f.table(), "json"));
  CATCH_CHECK(j["sweep"] == "abl");
  CATCH_CHECK(j["columns"][2]["lower_is_better"] == true);
  const auto& soft = j["rows"][0];
  CATCH_CHECK(soft["keys"]["attention.variant"] == "softmax");
  CATCH_CHECK(soft["keys"]["attention.renormalize"].is_null());
  CATCH_CHECK(soft["cells"][0]["mean"].get<double>() == Approx(0.52));
  CATCH_CHECK(soft["cells"][0]["within_stderr_of_best"] == true);
  CATCH_CHECK(soft["runs"] == nlohmann::json({"s0", "s1", "s2"}));
  CATCH_CHECK(j["rows"][1]["cells"][1].is_null());  // missing, not 0
  CATCH_CHECK(j["rows"][1]["avg"]["complete"] == false);
  CATCH_CHECK(j["rows"][3]["avg"].is_null());
  CATCH_CHECK(j["notes"].size() >= 3);
}

CATCH_TEST_CASE("table: --metric, --tasks and --rows") {
  Fixture f;
  TableRequest r;
  r.metric = MetricChoice::Acc;
  ResultTable acc = f.table(r);
  CATCH_CHECK(acc.columns[0].metric == "acc");
  CATCH_CHECK(acc.rows[0].cells[0].mean == Approx(0.62));

  r.metric = MetricChoice::AccNorm;  // strict: winogrande reports no acc_norm
  ResultTable norm = f.table(r);
  CATCH_CHECK(norm.columns[1].metric == "acc_norm");
  CATCH_CHECK(norm.rows[0].cells[1].n == 0);
  CATCH_CHECK_FALSE(norm.rows[0].avg->complete());
  CATCH_CHECK_THAT(render_table(norm, "md"), Contains("winogrande reports no acc_norm"));

  TableRequest t;
  t.tasks = {"wikitext", "piqa"};
  ResultTable two = f.table(t);
  CATCH_REQUIRE(two.columns.size() == 2);
  CATCH_CHECK(two.columns[0].task == "wikitext");
  CATCH_CHECK(two.columns[1].task == "piqa");
  t.tasks = {"piqa", "hellaswag"};
  CATCH_REQUIRE_THROWS_WITH(f.table(t), Contains("no evals of task 'hellaswag'"));

  TableRequest rows;
  rows.rows = {"attention.position"};
  ResultTable by_pos = f.table(rows);
  CATCH_REQUIRE(by_pos.rows.size() == 2);
  CATCH_CHECK(by_pos.rows[0].keys[0] == "rope");
  CATCH_CHECK(by_pos.rows[0].n == 4);  // softmax x3 + elastic false seed 0
  rows.rows = {"attention.positon"};
  CATCH_REQUIRE_THROWS_AS(f.table(rows), UsageError);
  CATCH_REQUIRE_THROWS_WITH(f.table(rows), Contains("did you mean 'attention.position'"));
  CATCH_REQUIRE_THROWS_AS(parse_metric_choice("accnorm"), UsageError);
  CATCH_REQUIRE_THROWS_WITH(render_table(f.table(), "markdown"), Contains("registered: csv, json, latex, md"));
}

CATCH_TEST_CASE("table: --where values are bound, quotes included, and never injected") {
  Fixture f;
  TableRequest r;
  r.where = {{"attention.variant", "softmax"}};
  ResultTable soft = f.table(r);
  CATCH_REQUIRE(soft.rows.size() == 1);
  CATCH_CHECK(soft.rows[0].n == 3);

  r.where = {{"data.train", "shards/it's here"}};  // a quote in the value
  ResultTable alibi = f.table(r);
  CATCH_REQUIRE(alibi.rows.size() == 1);
  CATCH_CHECK(alibi.rows[0].keys[0] == "alibi");

  r.where = {{"attention.variant", "x' OR '1'='1"}};  // would match every run if concatenated
  CATCH_REQUIRE_THROWS_WITH(f.table(r), Contains("no runs matching --where"));

  r.where = {{"train.seed", "0.0"}};  // numeric params also compare as numbers
  ResultTable seed0 = f.table(r);
  int total = 0;
  for (const Row& row : seed0.rows) total += row.n;
  CATCH_CHECK(total == 3);  // softmax, alibi, elastic-false seed 0 finished; r0 is running

  r.where = {{"attention.varient", "lazy"}};
  CATCH_REQUIRE_THROWS_WITH(f.table(r), Contains("did you mean 'attention.variant'"));

  TableRequest missing;
  missing.sweep = "abl2";
  CATCH_REQUIRE_THROWS_WITH(f.table(missing), Contains("no sweep 'abl2'"));
}

CATCH_TEST_CASE("table: Avg is over the paper's nine tasks, LAMBADA's accuracy shown but not averaged") {
  TempDir dir;
  Store store = Store::open(dir.path() / "r.db");
  add_run(store, "avg", "soft0", {{"attention.variant", "softmax", "string"}, {"train.seed", "0", "int"}});
  store.record_evals("soft0", {eval("piqa", "acc_norm", 0.60, 0.01), eval("copa", "acc", 0.70, 0.05),
                               eval("lambada_openai", "acc", 0.10, 0.01),
                               eval("lambada_openai", "perplexity", 900.0, 10.0)});
  TableRequest req;
  req.sweep = "avg";
  const ResultTable t = build_table(store.db(), req);
  CATCH_REQUIRE(t.columns.size() == 4);  // piqa acc_norm, copa acc, lambada perplexity, lambada acc
  const Column& lambada_acc = t.columns[3];
  CATCH_CHECK(lambada_acc.task == "lambada_openai");
  CATCH_CHECK(lambada_acc.accuracy);
  CATCH_CHECK_FALSE(lambada_acc.in_average);
  CATCH_CHECK(t.columns[0].in_average);
  CATCH_CHECK(t.columns[1].in_average);
  CATCH_REQUIRE(t.rows[0].avg.has_value());
  CATCH_CHECK(t.rows[0].avg->mean == Approx(0.65));  // (60 + 70) / 2: LAMBADA's 10 is left out
  CATCH_CHECK(t.rows[0].avg->complete());
  CATCH_CHECK(format_value(lambada_acc, 0.10) == "10.0");  // still an accuracy, in %
  const std::string md = render_table(t, "md");
  CATCH_CHECK_THAT(md, Contains("Avg: the mean of the accuracies of the paper's nine tasks (piqa, "));
  CATCH_CHECK_THAT(md, Contains("; lambada_openai shown, not averaged."));
}

CATCH_TEST_CASE("table: a value printed with its standard error is rounded to it") {
  CATCH_CHECK(format_with_error(0.6, 0.16329931618554522) == "0.60 ± 0.16");
  CATCH_CHECK(format_with_error(18.3712, 1.234) == "18.4 ± 1.2");
  CATCH_CHECK(format_with_error(123.4, 25.0) == "123 ± 25");
  CATCH_CHECK(format_with_error(0.5, std::nullopt) == "0.5");
  CATCH_CHECK(format_with_error(0.123456, 0.0) == "0.1235");  // no error to round to
}

CATCH_TEST_CASE("table: cells scored on other items, protocols or BOS policies are marked and named") {
  TempDir dir;
  Store store = Store::open(dir.path() / "r.db");
  const char* runs[] = {"soft0", "soft1", "lazy0"};
  for (const char* id : runs) {
    add_run(store, "mix", id, {{"attention.variant", id[0] == 's' ? "softmax" : "lazy", "string"},
                               {"train.seed", std::string(1, id[4]), "int"}});
  }
  store.record_evals("soft0", {eval("copa", "acc", 0.60, 0.05), eval("piqa", "acc", 0.5, 0.01)});
  store.record_evals("soft1", {eval("copa", "acc", 0.62, 0.05), eval("piqa", "acc", 0.5, 0.01)});
  EvalRow small = eval("copa", "acc", 0.70, 0.1);  // an `eval --limit 20 --db` beside the sweep's 100
  small.n = 20;
  EvalRow prepend = eval("piqa", "acc", 0.5, 0.01);  // same items, another BOS policy
  prepend.bos = "prepend";
  store.record_evals("lazy0", {small, prepend});
  TableRequest req;
  req.sweep = "mix";
  const ResultTable t = build_table(store.db(), req);
  CATCH_REQUIRE(t.rows.size() == 2);
  CATCH_CHECK_FALSE(t.rows[0].cells[0].other_scoring);  // softmax: the common 100 items
  CATCH_CHECK(t.rows[1].cells[0].other_scoring);        // lazy's 20 items
  CATCH_CHECK(t.rows[1].cells[1].other_scoring);        // lazy's BOS policy
  const std::string md = render_table(t, "md");
  CATCH_CHECK_THAT(md, Contains("‡"));
  CATCH_CHECK_THAT(md, Contains("copa acc: runs scored differently: 100 items, protocol 1, bos none (2 runs); "
                                "20 items, protocol 1, bos none (1 run); ‡ marks the cells"));
  CATCH_CHECK_THAT(md, Contains("piqa acc: runs scored differently"));
  CATCH_CHECK_THAT(render_table(t, "latex"), Contains("$^\\ddagger$"));
}

CATCH_TEST_CASE("table: runs named by --runs, standalone or of several sweeps, and no bold on a tie") {
  TempDir dir;
  Store store = Store::open(dir.path() / "r.db");
  // A standalone run (attnbench train + eval --db: no sweep) and a run of a sweep.
  add_run(store, "", "solo", {{"attention.variant", "lazy", "string"}});
  add_run(store, "s", "soft", {{"attention.variant", "softmax", "string"}});
  add_run(store, "s", "other", {{"attention.variant", "alibi", "string"}});
  store.record_evals("solo", {eval("copa", "acc", 0.60, 0.05), eval("piqa", "acc", 0.0)});
  store.record_evals("soft", {eval("copa", "acc", 0.55, 0.05), eval("piqa", "acc", 0.0)});
  store.record_evals("other", {eval("copa", "acc", 0.50, 0.05), eval("piqa", "acc", 0.0)});
  TableRequest req;
  req.runs = {"solo", "soft"};
  const ResultTable t = build_table(store.db(), req);
  CATCH_REQUIRE(t.rows.size() == 2);  // "other" is not named
  CATCH_CHECK(t.rows[0].keys == std::vector<std::string>{"lazy"});
  CATCH_CHECK(t.rows[0].cells[0].best);  // copa: 0.60
  // piqa: 0.0 in every row is a tie, not a best.
  CATCH_CHECK_FALSE(t.rows[0].cells[1].best);
  CATCH_CHECK_FALSE(t.rows[1].cells[1].best);
  CATCH_CHECK_THAT(render_table(t, "md"), Contains("Runs solo, soft, metric"));
  req.where = {{"attention.varient", "lazy"}};
  CATCH_CHECK_THROWS_WITH(build_table(store.db(), req), Contains("no param 'attention.varient' in "
                                                                 "the runs given"));
}
