#include "results/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "core/common/error.h"
#include "results/compare_items.h"
#include "results/paired.h"
#include "results/runs.h"
#include "results/sqlite.h"
#include "results/table.h"

namespace attnbench::results {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::string param(Db& db, const std::string& run, const std::string& key) {
  Stmt s = db.prepare("SELECT value FROM params WHERE run = ? AND key = ?");
  s.bind_all(run, key);
  return s.step() ? s.text(0) : "";
}

std::optional<double> eval_value(Db& db, const std::string& run, const Column& col) {
  Stmt s = db.prepare("SELECT value FROM evals WHERE run = ? AND task = ? AND metric = ?");
  s.bind_all(run, col.task, col.metric);
  return s.step() ? s.optional_real(0) : std::nullopt;
}

bool task_has_metric(Db& db, const std::string& run, const std::string& task, const char* metric) {
  Stmt s = db.prepare("SELECT 1 FROM evals WHERE run = ? AND task = ? AND metric = ?");
  s.bind_all(run, task, metric);
  return s.step();
}

std::string row_label(const ResultTable& t, const Row& r) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < r.keys.size(); ++i) parts.push_back(t.row_keys[i] + "=" + row_value(r.keys[i]));
  return parts.empty() ? "(all)" : join(parts, ",");
}

// The row named by key=value pairs over the row keys, or the row holding a run (id or prefix).
size_t find_baseline(Db& db, const ResultTable& t, const std::string& selector) {
  std::vector<std::string> labels;
  for (const Row& r : t.rows) labels.push_back(row_label(t, r));
  if (selector.find('=') == std::string::npos) {
    const std::string id = resolve_run_id(db, selector);
    for (size_t i = 0; i < t.rows.size(); ++i) {
      for (const std::string& run : t.rows[i].runs) if (run == id) return i;
    }
    throw UsageError("--baseline: run " + id + " is not a finished run of sweep '" + t.sweep +
                     "' in the selected rows (" + join(labels, "; ") + ")");
  }
  std::vector<size_t> matches;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    bool all = true;
    for (const std::string& cond : split(selector, ',')) {
      const size_t eq = cond.find('=');
      auto key = std::find(t.row_keys.begin(), t.row_keys.end(), cond.substr(0, eq));
      if (eq == std::string::npos || key == t.row_keys.end()) {
        throw UsageError("--baseline: expected key=value over the row keys (" + join(t.row_keys) +
                         ") or a run id, got '" + cond + "'" + did_you_mean(cond.substr(0, eq), t.row_keys));
      }
      all = all && row_value(t.rows[i].keys[key - t.row_keys.begin()]) == cond.substr(eq + 1);
    }
    if (all) matches.push_back(i);
  }
  if (matches.size() == 1) return matches[0];
  throw UsageError("--baseline " + selector + ": " +
                   (matches.empty() ? "matches no row" : "matches several rows") +
                   "; rows: " + join(labels, "; "));
}


// A number for the grid: 6 significant digits (the data carry no more), null when not finite.
nlohmann::json number(double v) {
  if (!std::isfinite(v)) return nullptr;
  return std::stod(fmt::format("{:.6g}", v));
}

using RunPairs = std::vector<std::pair<std::string, std::string>>;  // (row run, baseline run)

// The row's runs paired with the baseline's by train.seed (same data order and initial draws);
// when no seed is shared, in creation order. Runs left without a partner are not compared.
RunPairs pair_runs(Db& db, const Row& row, const Row& base) {
  std::map<std::string, std::string> base_by_seed;
  for (const std::string& b : base.runs) base_by_seed.emplace(param(db, b, "train.seed"), b);
  RunPairs out;
  for (const std::string& r : row.runs) {
    auto it = base_by_seed.find(param(db, r, "train.seed"));
    if (it != base_by_seed.end()) out.emplace_back(r, it->second);
  }
  if (!out.empty()) return out;
  for (size_t i = 0; i < std::min(row.runs.size(), base.runs.size()); ++i) {
    out.emplace_back(row.runs[i], base.runs[i]);
  }
  return out;
}

// One row of the table against the baseline: where its lines go and how they name the row.
struct RowUnderTest {
  size_t index;
  std::string label;
  const Row& row;
};

void add_line(Comparison& out, const std::string& label, const ComparisonLine& l) {
  out.lines.push_back(l);
  out.grid.rows.push_back({label, l.task, l.metric, l.test, l.n, number(l.baseline), number(l.value),
                           number(l.diff), number(l.se), number(l.unpaired_se), number(l.p), l.detail});
}

// Over seeds: one-sided Welch, H1 = the row is better than the baseline (higher accuracy, lower
// perplexity): the acceptance rule of speed-run records.
void add_seed_line(Db& db, Comparison& out, const RowUnderTest& under, const Column& col,
                   const Row& base) {
  std::vector<double> x, y;
  for (const std::string& r : under.row.runs) if (auto v = eval_value(db, r, col)) x.push_back(*v);
  for (const std::string& r : base.runs) if (auto v = eval_value(db, r, col)) y.push_back(*v);
  if (x.empty() || y.empty()) return;
  const auto w = col.lower_is_better ? welch_one_sided(y, x) : welch_one_sided(x, y);
  const double nan = std::nan("");
  add_line(out, under.label, {under.index, col.task, col.metric, kWelchTest,
                 fmt::format("{} vs {} seeds", x.size(), y.size()), mean_of(y), mean_of(x),
                 mean_of(x) - mean_of(y), w ? w->std_error : nan, nan, w ? w->p : nan,
                 w ? fmt::format("t={:.3g}, df={:.3g}, H1: {} than the baseline", w->t, w->df,
                                 col.lower_is_better ? "lower" : "higher")
                   : "no p: needs >= 2 seeds per side with some spread"});
}

// Why a run's samples do not reproduce its stored score of `metric` (acc, acc_norm: the mean over
// its items of `measure`), or "" when they do or cannot be compared (an item without the measure).
// Samples that give another score (a database edited or merged from another scoring) are not the
// items of that score, so no item-level test is run on them.
std::string unreproduced(Db& db, const std::string& run, const Items& items, const std::string& task,
                         const char* metric, std::optional<double> ItemOutcome::*measure) {
  double sum = 0;
  for (const auto& [doc, o] : items) {
    if (!(o.*measure)) return "";
    sum += *(o.*measure);
  }
  Stmt s = db.prepare("SELECT value FROM evals WHERE run = ? AND task = ? AND metric = ?");
  s.bind_all(run, task, metric);
  if (!s.step() || s.is_null(0)) return "";
  const double mean = sum / static_cast<double>(items.size()), stored = s.real(0);
  if (std::abs(mean - stored) <= 1e-9) return "";
  return fmt::format("{}: {} tested over seeds only, run {}'s samples give {:.6g} over {} items, "
                     "not its stored {:.6g}", task, metric, run, mean, items.size(), stored);
}

// Whether every run's samples reproduce its stored `metric`; else a note says which does not.
bool reproduced(Db& db, Comparison& out, const RunPairs& pairs,
                const std::vector<std::pair<Items, Items>>& loaded, const std::string& task,
                const char* metric, std::optional<double> ItemOutcome::*measure) {
  for (size_t i = 0; i < pairs.size(); ++i) {
    for (const auto& [run, items] : {std::pair{pairs[i].first, &loaded[i].first},
                                     std::pair{pairs[i].second, &loaded[i].second}}) {
      const std::string why = unreproduced(db, run, *items, task, metric, measure);
      if (why.empty()) continue;
      if (std::find(out.notes.begin(), out.notes.end(), why) == out.notes.end()) {
        out.notes.push_back(why);
      }
      return false;
    }
  }
  return true;
}

// Over items (samples of both runs of each pair): the paired bootstrap of acc, acc_norm and the
// gold log-likelihood, and McNemar's exact test of acc and acc_norm. False when some run has no
// samples of the task.
bool add_item_lines(Db& db, Comparison& out, const RowUnderTest& under, const std::string& task,
                    const RunPairs& pairs, const CompareRequest& req) {
  std::vector<std::pair<Items, Items>> loaded;
  for (const auto& [v, b] : pairs) {
    loaded.emplace_back(load_items(db, v, task), load_items(db, b, task));
    if (loaded.back().first.empty() || loaded.back().second.empty()) return false;
  }
  if (loaded.empty()) return false;
  for (const auto& [name, measure] : {std::pair{"acc", &ItemOutcome::correct},
                                      std::pair{"acc_norm", &ItemOutcome::correct_norm},
                                      std::pair{"gold_loglikelihood", &ItemOutcome::gold_ll}}) {
    const bool accuracy = measure != &ItemOutcome::gold_ll;
    if (accuracy && !task_has_metric(db, pairs[0].first, task, name)) continue;
    if (accuracy && !reproduced(db, out, pairs, loaded, task, name, measure)) continue;
    const ItemSeries s = item_series(loaded, measure);
    if (s.variant.empty()) {
      const std::string note = fmt::format("{}: acc_norm tested over seeds only, its samples hold "
                                           "no valid choice lengths (none are stored before schema "
                                           "version 3)", task);
      if (measure == &ItemOutcome::correct_norm &&
          std::find(out.notes.begin(), out.notes.end(), note) == out.notes.end()) {
        out.notes.push_back(note);
      }
      continue;
    }
    std::vector<double> diffs;
    for (size_t i = 0; i < s.variant.size(); ++i) diffs.push_back(s.variant[i] - s.baseline[i]);
    const std::string n = loaded.size() == 1 ? fmt::format("{} items", diffs.size())
                                             : fmt::format("{} items x {} seed pairs", diffs.size(), loaded.size());
    if (static_cast<int64_t>(diffs.size()) < kMinPairedItems) {
      const double nan = std::nan("");
      add_line(out, under.label, {under.index, task, name, kBootstrapTest, n, mean_of(s.baseline),
                                  mean_of(s.variant), mean_of(diffs), nan, nan, nan,
                                  fmt::format("too few items: no p below {} (docs/results.md)", kMinPairedItems)});
      continue;
    }
    const BootstrapResult boot = paired_bootstrap(diffs, req.resamples, req.seed);
    add_line(out, under.label, {under.index, task, name, kBootstrapTest, n, mean_of(s.baseline),
                   mean_of(s.variant), boot.mean, boot.std_error,
                   unpaired_std_error(s.variant, s.baseline), boot.p,
                   fmt::format("95% interval [{:.4g}, {:.4g}], {} resamples, seed {}", boot.lo,
                               boot.hi, boot.resamples, req.seed)});
    if (!accuracy) continue;
    add_line(out, under.label, {under.index, task, name, kMcNemarTest,
                   fmt::format("{} pairs", diffs.size() * loaded.size()), mean_of(s.baseline),
                   mean_of(s.variant), boot.mean, std::nan(""), std::nan(""),
                   mcnemar_exact_p(s.only_variant, s.only_baseline),
                   fmt::format("discordant: {} only the row right, {} only the baseline right",
                               s.only_variant, s.only_baseline)});
  }
  return true;
}

// The baseline row of `table` named by req.baseline; a UsageError when it has no finished runs.
size_t baseline_row(Db& db, const ResultTable& table, const CompareRequest& req) {
  const size_t bi = find_baseline(db, table, req.baseline);
  if (table.rows[bi].n == 0) {
    throw UsageError("--baseline " + req.baseline + ": row " + row_label(table, table.rows[bi]) +
                     " has no finished runs");
  }
  return bi;
}

// An item-level test with one run on each side asks whether two checkpoints differ on these
// items, not whether two variants do: a second seed can differ from the first as much.
void add_single_run_note(Comparison& out, const ResultTable& table, size_t bi) {
  std::vector<std::string> single;
  for (size_t ri = 0; ri < table.rows.size(); ++ri) {
    if (ri != bi && table.rows[ri].n == 1 && table.rows[bi].n == 1) {
      single.push_back(row_label(table, table.rows[ri]));
    }
  }
  if (single.empty()) return;
  out.notes.push_back("one run per side (" + join(single) + " against the baseline): the tests "
                      "over items compare these checkpoints, not the variants; seeds would (the "
                      "Welch test over seeds needs >= 2 runs per row)");
}

// Every test of every row with finished runs against row bi.
Comparison compare_rows(Db& db, const ResultTable& table, size_t bi, const CompareRequest& req) {
  if (req.resamples < 1) throw UsageError("--resamples: expected at least 1, got " + std::to_string(req.resamples));
  const Row& base = table.rows[bi];
  Comparison out;
  out.grid.headers = {"row", "task", "metric", "test", "n", "baseline", "value", "diff", "se",
                      "unpaired_se", "p", "detail"};
  std::map<std::string, std::vector<std::string>> without_samples;  // row -> tasks
  for (size_t ri = 0; ri < table.rows.size(); ++ri) {
    if (ri == bi || table.rows[ri].n == 0) continue;
    const RowUnderTest under{ri, row_label(table, table.rows[ri]), table.rows[ri]};
    std::vector<std::string> tasks;
    for (const Column& col : table.columns) {
      if (col.diagnostic) continue;
      add_seed_line(db, out, under, col, base);
      if (std::find(tasks.begin(), tasks.end(), col.task) == tasks.end()) tasks.push_back(col.task);
    }
    const RunPairs pairs = pair_runs(db, under.row, base);
    for (const std::string& task : tasks) {
      if (!add_item_lines(db, out, under, task, pairs, req)) without_samples[under.label].push_back(task);
    }
  }
  out.notes.push_back(fmt::format("baseline: {} ({} finished run(s)); diff = row - baseline; "
                                  "accuracies as fractions", row_label(table, base), base.n));
  add_single_run_note(out, table, bi);
  for (const auto& [label, tasks] : without_samples) {
    out.notes.push_back("row " + label + ": no per-item samples of " + join(tasks) +
                        " in some run of the row or the baseline, so no test over items "
                        "(sweeps store them for every task they score; for runs scored before, "
                        "`attnbench eval --log-samples --db ...` adds them)");
  }
  return out;
}

// The line that decides a cell against the baseline (mark_against_baseline in compare.h).
const ComparisonLine* deciding_line(const Comparison& c, size_t row, const Column& col) {
  const char* item_measure = col.metric == "acc"        ? "acc"
                             : col.metric == "acc_norm" ? "acc_norm"
                                                        : "gold_loglikelihood";
  const ComparisonLine* seeds = nullptr;
  for (const ComparisonLine& l : c.lines) {
    if (l.row != row || l.task != col.task || !std::isfinite(l.p)) continue;
    if (item_measure && l.test == kBootstrapTest && l.metric == item_measure) return &l;
    if (l.test == kWelchTest && l.metric == col.metric) seeds = &l;
  }
  return seeds;
}

// Better or worse at p < kBaselineAlpha. Over items, a positive diff is better for every measure
// (acc; the gold log-likelihood: higher means lower perplexity and bits per byte); the Welch test
// is one-sided (H1: the row is better), so it can only mark Better.
BaselineTest baseline_test(const ComparisonLine& l) {
  BaselineTest t{l.metric, l.test, l.n, l.diff, l.p};
  if (l.p < kBaselineAlpha) {
    t.mark = l.test == kWelchTest || l.diff > 0 ? BaselineTest::Mark::Better : BaselineTest::Mark::Worse;
  }
  return t;
}

}  // namespace

std::optional<size_t> default_baseline_row(const ResultTable& table) {
  std::vector<size_t> finished;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    if (table.rows[i].n > 0) finished.push_back(i);
  }
  if (finished.size() < 2) return std::nullopt;
  const auto variant = std::find(table.row_keys.begin(), table.row_keys.end(), kDefaultBaselineKey);
  if (variant != table.row_keys.end()) {
    const size_t k = static_cast<size_t>(variant - table.row_keys.begin());
    for (size_t i : finished) {
      if (table.rows[i].keys[k] == kDefaultBaselineVariant) return i;
    }
  }
  return finished[0];
}

Comparison compare_to_baseline(Db& db, const CompareRequest& req) {
  const ResultTable table = build_table(db, req.table);
  if (!req.baseline.empty()) return compare_rows(db, table, baseline_row(db, table, req), req);
  const std::optional<size_t> bi = default_baseline_row(table);
  if (!bi) {
    Comparison none;
    none.notes.push_back("fewer than two rows with finished runs: nothing to compare");
    return none;
  }
  return compare_rows(db, table, *bi, req);
}

void mark_against_baseline(Db& db, ResultTable& table, const CompareRequest& req) {
  const size_t bi = baseline_row(db, table, req);
  const Comparison c = compare_rows(db, table, bi, req);
  table.rows[bi].baseline = true;
  table.baseline = BaselineInfo{req.baseline, row_label(table, table.rows[bi]), req.resamples, req.seed};
  for (size_t ri = 0; ri < table.rows.size(); ++ri) {
    for (size_t ci = 0; ci < table.columns.size(); ++ci) {
      if (ri == bi || table.columns[ci].diagnostic || table.rows[ri].cells[ci].n == 0) continue;
      if (const ComparisonLine* l = deciding_line(c, ri, table.columns[ci])) {
        table.rows[ri].cells[ci].vs_baseline = baseline_test(*l);
      }
    }
  }
}

}  // namespace attnbench::results
