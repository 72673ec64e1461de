// `results compare` on a hand-built store: the rows of the table against a baseline row, with the
// per-item outcomes rebuilt from the samples table (results/compare.h).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/common/error.h"
#include "results/compare.h"
#include "results/sqlite.h"
#include "tests/results/fixture.h"

using namespace attnbench::results;
using attnbench::results::testing::add_run;
using attnbench::results::testing::eval;
using attnbench::results::testing::TempDir;
using Catch::Matchers::Contains;

namespace {

// 20 two-choice piqa items, gold = choice 0; `right` lists the items the run gets right.
std::vector<Sample> piqa_samples(const std::vector<int>& right) {
  std::vector<Sample> out;
  for (int doc = 0; doc < 20; ++doc) {
    const bool ok = std::find(right.begin(), right.end(), doc) != right.end();
    out.push_back({"piqa", doc, 0, ok ? -1.0 : -2.0, ok, true, 3});
    out.push_back({"piqa", doc, 1, ok ? -2.0 : -1.0, !ok, false, 3});
  }
  return out;
}

std::vector<int> range(int from, int to) {
  std::vector<int> v;
  for (int i = from; i < to; ++i) v.push_back(i);
  return v;
}

// softmax and lazy, seeds 0 and 1. Per seed, lazy fixes items 10..13 and breaks item 0.
void fill(Store& store) {
  auto params = [](const std::string& variant, int seed) {
    return std::vector<Param>{{"attention.variant", variant, "string"},
                              {"train.seed", std::to_string(seed), "int"}};
  };
  const std::pair<const char*, double> runs[] = {{"soft0", 0.50}, {"soft1", 0.52}, {"lazy0", 0.55}, {"lazy1", 0.57}};
  for (const auto& [id, acc_norm] : runs) {
    const bool lazy = id[0] == 'l';
    add_run(store, "s", id, params(lazy ? "lazy" : "softmax", id[4] - '0'));
    // acc as its samples give it (10 or 13 of 20 items right): the item-level tests run only on
    // samples that reproduce the stored score. acc_norm differs per seed, for the Welch test.
    store.record_evals(id, {eval("piqa", "acc", lazy ? 0.65 : 0.5, 0.01),
                            eval("piqa", "acc_norm", acc_norm, 0.01), eval("copa", "acc", 0.6, 0.05)});
    store.record_samples(id, piqa_samples(lazy ? range(1, 14) : range(0, 10)));
  }
}

const std::vector<nlohmann::json>& line(const Comparison& c, const std::string& metric,
                                        const std::string& test_prefix) {
  for (const auto& row : c.grid.rows) {
    if (row[2] == metric && row[3].get<std::string>().rfind(test_prefix, 0) == 0) return row;
  }
  throw std::runtime_error("no line " + metric + " / " + test_prefix);
}

}  // namespace

CATCH_TEST_CASE("compare: paired item tests from samples and Welch over seeds against a baseline") {
  TempDir dir;
  Store store = Store::open(dir.path() / "r.db");
  fill(store);
  CompareRequest req;
  req.table.sweep = "s";
  req.baseline = "attention.variant=softmax";
  req.resamples = 2000;
  const Comparison c = compare_to_baseline(store.db(), req);
  for (const auto& row : c.grid.rows) CATCH_CHECK(row[0] == "attention.variant=lazy");

  // McNemar pools the (seed pair, item) units: 2 x 4 fixes against 2 x 1 break, n = 40 pairs;
  // p = 2 P(X <= 2 | n = 10, 1/2) = 2 (1 + 10 + 45) / 1024.
  const auto& mc = line(c, "acc", "McNemar");
  CATCH_CHECK(mc[4] == "40 pairs");
  CATCH_CHECK(mc[10].get<double>() == Approx(112.0 / 1024).epsilon(1e-5));
  CATCH_CHECK_THAT(mc[11].get<std::string>(), Contains("8 only the row right, 2 only the baseline"));
  const auto& boot = line(c, "acc", "paired bootstrap");
  CATCH_CHECK(boot[4] == "20 items x 2 seed pairs");
  CATCH_CHECK(boot[5].get<double>() == Approx(0.5));   // softmax: 10 of 20
  CATCH_CHECK(boot[6].get<double>() == Approx(0.65));  // lazy: 13 of 20
  CATCH_CHECK(boot[7].get<double>() == Approx(0.15));
  CATCH_CHECK(boot[8].get<double>() < boot[9].get<double>());  // paired se below unpaired se
  const auto& ll = line(c, "gold_loglikelihood", "paired bootstrap");
  CATCH_CHECK(ll[7].get<double>() == Approx(0.15));  // gold ll -1 right, -2 wrong: the same gap

  // Welch over seeds on the table's metric (acc_norm): 0.55, 0.57 against 0.50, 0.52, so
  // t = 0.05 / sqrt(0.0002 / 2 + 0.0002 / 2), df = 2, and the t(2) closed form gives
  // p = 1/2 - t / (2 sqrt(2 + t^2)).
  const auto& w = line(c, "acc_norm", "Welch");
  const double t = 0.05 / std::sqrt(0.0002);
  CATCH_CHECK(w[4] == "2 vs 2 seeds");
  CATCH_CHECK(w[10].get<double>() == Approx(0.5 - t / (2 * std::sqrt(2 + t * t))).epsilon(1e-5));
  // copa has evals but no samples: a Welch line (undefined: no spread), no item lines, a note.
  const auto& copa = line(c, "acc", "Welch");
  CATCH_CHECK(copa[1] == "copa");
  CATCH_CHECK(copa[10].is_null());
  bool noted = false;
  for (const auto& n : c.notes) noted = noted || n.find("row attention.variant=lazy: no per-item samples of copa ") == 0;
  CATCH_CHECK(noted);

  // The baseline may be named by one of its runs; the result is the same.
  req.baseline = "soft1";
  CATCH_CHECK(compare_to_baseline(store.db(), req).grid.rows == c.grid.rows);
}

CATCH_TEST_CASE("compare: acc_norm is tested over items from the stored choice lengths") {
  // 20 two-choice items, gold = choice 0 of 10 characters, choice 1 of 1: ll -5 against -1 is
  // wrong for acc (argmax ll) but right for acc_norm (-0.5 > -1); ll -20 against -1 is wrong for
  // both. softmax gets acc_norm right on items 0..9, lazy on 1..13.
  auto samples = [](const std::vector<int>& right) {
    std::vector<Sample> out;
    for (int doc = 0; doc < 20; ++doc) {
      const bool ok = std::find(right.begin(), right.end(), doc) != right.end();
      for (int request : {0, 1}) {
        Sample x;
        x.task = "piqa";
        x.doc = doc;
        x.request = request;
        x.loglikelihood = request == 1 ? -1.0 : ok ? -5.0 : -20.0;
        x.is_gold = request == 0;
        x.choice_chars = request == 0 ? 10 : 1;
        out.push_back(x);
      }
    }
    return out;
  };
  TempDir dir;
  Store store = Store::open(dir.path() / "r.db");
  for (const char* variant : {"softmax", "lazy"}) {
    const std::string id = std::string(variant) + "0";
    add_run(store, "s", id, {{"attention.variant", variant, "string"}, {"train.seed", "0", "int"}});
    const bool lazy = variant[0] == 'l';
    store.record_evals(id, {eval("piqa", "acc", 0.0, 0.0), eval("piqa", "acc_norm", lazy ? 0.65 : 0.5, 0.1)});
    store.record_samples(id, samples(lazy ? range(1, 14) : range(0, 10)));
  }
  CompareRequest req;
  req.table.sweep = "s";
  req.resamples = 2000;
  const Comparison c = compare_to_baseline(store.db(), req);
  const auto& boot = line(c, "acc_norm", "paired bootstrap");
  CATCH_CHECK(boot[4] == "20 items");
  CATCH_CHECK(boot[5].get<double>() == Approx(0.5));
  CATCH_CHECK(boot[6].get<double>() == Approx(0.65));
  // McNemar: 4 items only lazy gets right, 1 only softmax: p = 2 P(X <= 1 | n = 5, 1/2) = 12/32.
  const auto& mc = line(c, "acc_norm", "McNemar");
  CATCH_CHECK(mc[10].get<double>() == Approx(12.0 / 32).epsilon(1e-9));
  CATCH_CHECK(line(c, "acc", "paired bootstrap")[6].get<double>() == Approx(0.0));  // acc: none right
  for (const auto& n : c.notes) CATCH_CHECK(n.find("acc_norm tested over seeds only") == std::string::npos);
  // One seed each: the item tests compare two checkpoints, and the notes say so.
  CATCH_CHECK(std::count_if(c.notes.begin(), c.notes.end(), [](const std::string& n) {
                return n.find("one run per side (attention.variant=lazy against the baseline): the "
                              "tests over items compare these checkpoints, not the variants") == 0;
              }) == 1);

  // Samples without lengths (stored before schema version 3): acc_norm over seeds only, said once.
  store.db().exec("UPDATE samples SET choice_chars = NULL");
  const Comparison old = compare_to_baseline(store.db(), req);
  CATCH_CHECK_THROWS(line(old, "acc_norm", "paired bootstrap"));
  CATCH_CHECK(std::count_if(old.notes.begin(), old.notes.end(), [](const std::string& n) {
                return n.find("piqa: acc_norm tested over seeds only") == 0;
              }) == 1);
}

CATCH_TEST_CASE("compare: choice lengths that are no lengths, or samples that do not give the "
                "stored score, are not tested over items") {
  // Two runs with the same stored acc_norm (0.5) and samples that give it: gold choice 0 of 10
  // characters at ll -5 against choice 1 of 1 at ll -1 is right for acc_norm on items 0..9 of 20.
  TempDir dir;
  Store store = Store::open(dir.path() / "r.db");
  for (const char* variant : {"softmax", "lazy"}) {
    const std::string id = std::string(variant) + "0";
    add_run(store, "s", id, {{"attention.variant", variant, "string"}, {"train.seed", "0", "int"}});
    store.record_evals(id, {eval("piqa", "acc", 0.0, 0.0), eval("piqa", "acc_norm", 0.5, 0.1)});
    std::vector<Sample> samples;
    for (int doc = 0; doc < 20; ++doc) {
      for (int request : {0, 1}) {
        Sample x;
        x.task = "piqa";
        x.doc = doc;
        x.request = request;
        x.loglikelihood = request == 1 ? -1.0 : doc < 10 ? -5.0 : -20.0;
        x.is_gold = request == 0;
        x.choice_chars = request == 0 ? 10 : 1;
        samples.push_back(x);
      }
    }
    store.record_samples(id, samples);
  }
  CompareRequest req;
  req.table.sweep = "s";
  req.resamples = 2000;
  CATCH_CHECK(line(compare_to_baseline(store.db(), req), "acc_norm", "paired bootstrap")[7] == 0.0);
  // One run's gold lengths replaced by what a length cannot be (0 is one, but gives another score).
  for (const std::string bad : {"0", "-5", "9000000000000000000", "1e400", "-1e400", "'ten'"}) {
    CATCH_INFO("choice_chars = " << bad);
    store.db().exec("UPDATE samples SET choice_chars = " + bad +
                    " WHERE run = 'lazy0' AND request = 0");
    const Comparison c = compare_to_baseline(store.db(), req);
    CATCH_CHECK_THROWS(line(c, "acc_norm", "paired bootstrap"));
    CATCH_CHECK_THROWS(line(c, "acc_norm", "McNemar"));
    CATCH_CHECK(std::count_if(c.notes.begin(), c.notes.end(), [](const std::string& n) {
                  return n.find("piqa: acc_norm tested over seeds only") == 0;
                }) == 1);
    store.db().exec("UPDATE samples SET choice_chars = 10 WHERE run = 'lazy0' AND request = 0");
  }
  // Samples of another scoring (gold log-likelihoods changed): acc is not reproduced either.
  store.db().exec("UPDATE samples SET loglikelihood = 0 WHERE run = 'lazy0' AND request = 0");
  const Comparison c = compare_to_baseline(store.db(), req);
  CATCH_CHECK_THROWS(line(c, "acc", "paired bootstrap"));
  CATCH_CHECK(std::any_of(c.notes.begin(), c.notes.end(), [](const std::string& n) {
    return n.find("piqa: acc tested over seeds only, run lazy0's samples give 1 over 20 items, not "
                  "its stored 0") == 0;
  }));
}

CATCH_TEST_CASE("compare: a bad baseline selector is a usage error naming the rows") {
  TempDir dir;
  Store store = Store::open(dir.path() / "r.db");
  fill(store);
  CompareRequest req;
  req.table.sweep = "s";
  req.baseline = "attention.variant=alibi";
  CATCH_CHECK_THROWS_WITH(compare_to_baseline(store.db(), req),
                          Contains("matches no row") && Contains("attention.variant=lazy"));
  req.baseline = "attention.varient=softmax";
  CATCH_CHECK_THROWS_WITH(compare_to_baseline(store.db(), req), Contains("did you mean"));
  req.baseline = "zzz";
  CATCH_CHECK_THROWS_AS(compare_to_baseline(store.db(), req), attnbench::UsageError);
  req.baseline = "attention.variant=softmax";
  req.resamples = 0;
  CATCH_CHECK_THROWS_AS(compare_to_baseline(store.db(), req), attnbench::UsageError);
}

CATCH_TEST_CASE("compare: without a baseline, the softmax row is the reference wherever it is listed") {
  TempDir dir;
  Store store = Store::open(dir.path() / "r.db");
  // lazy is created first, so the table lists it first; softmax is still the default baseline.
  for (const char* variant : {"lazy", "softmax", "alibi"}) {
    const std::string id = std::string(variant) + "0";
    add_run(store, "s", id, {{"attention.variant", variant, "string"}, {"train.seed", "0", "int"}});
    store.record_evals(id, {eval("copa", "acc", 0.6, 0.05)});
  }
  CompareRequest req;
  req.table.sweep = "s";
  const ResultTable table = build_table(store.db(), req.table);
  CATCH_REQUIRE(table.rows[0].keys[0] == "lazy");
  const auto bi = default_baseline_row(table);
  CATCH_REQUIRE(bi.has_value());
  CATCH_CHECK(table.rows[*bi].keys[0] == "softmax");
  const Comparison c = compare_to_baseline(store.db(), req);
  CATCH_CHECK_THAT(c.notes[0], Contains("baseline: attention.variant=softmax"));
  for (const auto& row : c.grid.rows) CATCH_CHECK(row[0] != "attention.variant=softmax");

  // Without a softmax row: the first row with finished runs.
  ResultTable no_softmax = table;
  no_softmax.rows.erase(no_softmax.rows.begin() + static_cast<std::ptrdiff_t>(*bi));
  CATCH_CHECK(default_baseline_row(no_softmax) == std::optional<size_t>(0));
  // One row with finished runs: nothing to compare.
  no_softmax.rows.resize(1);
  CATCH_CHECK_FALSE(default_baseline_row(no_softmax).has_value());
}

CATCH_TEST_CASE("compare: fewer than 10 paired items give no p and no marker, 10 give one") {
  for (const int items : {kMinPairedItems - 1, kMinPairedItems}) {
    CATCH_INFO(items << " items");
    TempDir dir;
    Store store = Store::open(dir.path() / "r.db");
    for (const char* variant : {"softmax", "lazy"}) {
      const std::string id = std::string(variant) + "0";
      add_run(store, "s", id, {{"attention.variant", variant, "string"}, {"train.seed", "0", "int"}});
      store.record_evals(id, {eval("wikitext", "word_perplexity", variant[0] == 'l' ? 30.0 : 40.0, 0)});
      // Every document better under lazy: the bootstrap alone would say p = 2 / (B + 1).
      std::vector<Sample> docs;
      for (int doc = 0; doc < items; ++doc) {
        docs.push_back({"wikitext", doc, 0, variant[0] == 'l' ? -100.0 : -110.0, false, true, 50});
      }
      store.record_samples(id, docs);
    }
    CompareRequest req;
    req.table.sweep = "s";
    req.baseline = "attention.variant=softmax";
    req.resamples = 2000;
    const Comparison c = compare_to_baseline(store.db(), req);
    const auto& l = line(c, "gold_loglikelihood", "paired bootstrap");
    CATCH_CHECK(l[4] == std::to_string(items) + " items");
    CATCH_CHECK(l[7].get<double>() == Approx(10.0));  // the difference is shown either way
    ResultTable table = build_table(store.db(), req.table);
    mark_against_baseline(store.db(), table, req);
    const Cell& cell = table.rows[1].cells[0];
    if (items < kMinPairedItems) {
      CATCH_CHECK(l[10].is_null());
      CATCH_CHECK_THAT(l[11].get<std::string>(), Contains("too few items"));
      CATCH_CHECK_FALSE(cell.vs_baseline.has_value());
    } else {
      CATCH_CHECK(l[10].get<double>() == Approx(2.0 / 2001));
      CATCH_REQUIRE(cell.vs_baseline.has_value());
      CATCH_CHECK(cell.vs_baseline->mark == BaselineTest::Mark::Better);
    }
  }
}
