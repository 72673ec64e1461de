// `attnbench results compare`: every row of a sweep's table against a baseline row, each
// difference with its test, its n and its p-value (docs/results.md, "`attnbench results compare`").
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results/grid.h"
#include "results/query.h"

namespace attnbench::results {

class Db;

struct CompareRequest {
  TableRequest table;  // the sweep, rows, metric, tasks and --where of `results table`
  // The baseline row: "key=value[,key=value...]" over the row keys, or a run id (prefix) whose row
  // it is; "" = default_baseline_row (compare_to_baseline only).
  std::string baseline;
  int64_t resamples = 10000;  // paired bootstrap
  uint64_t seed = 0;          // of the bootstrap's generator: the same inputs give the same p
};

constexpr const char* kDefaultBaselineKey = "attention.variant";
constexpr const char* kDefaultBaselineVariant = "softmax";

// The fewest items a paired bootstrap is run on. Below it the bootstrap's p means nothing: when
// every difference has one sign its p is 2 / (B + 1) at any n (0.0002 with 10,000 resamples from
// 2 WikiText documents), while the exact sign test cannot go below 2^(1-n) (0.5 at n = 2; 0.05 needs
// n >= 6), and percentile intervals under-cover at such n. The line then says "too few items" and
// carries no p, so no table marks it. McNemar's test is exact and runs at any n.
constexpr int64_t kMinPairedItems = 10;

// The tests, as every line and footnote names them.
constexpr const char* kBootstrapTest = "paired bootstrap, two-sided (items)";
constexpr const char* kMcNemarTest = "McNemar exact, two-sided (items)";
constexpr const char* kWelchTest = "Welch t, one-sided (seeds)";

// One test of one row against the baseline; NaN where a number does not apply.
struct ComparisonLine {
  size_t row = 0;  // index into the table's rows
  std::string task, metric, test, n;
  double baseline, value, diff, se, unpaired_se, p;
  std::string detail;
};

struct Comparison {
  std::vector<ComparisonLine> lines;
  // The same lines: row, task, metric, test, n, baseline, value, diff, se, unpaired_se, p, detail.
  Grid grid;
  std::vector<std::string> notes;  // facts the reader needs (missing samples, unpaired runs)
};

// The baseline row when none is named: the first row with finished runs whose attention.variant is
// softmax (standard attention, what every variant is measured against), else the first row with
// finished runs; nullopt when fewer than two rows have finished runs, as there is then nothing to
// compare.
std::optional<size_t> default_baseline_row(const ResultTable& table);

// Every test of every row against the baseline row. Without request.baseline and without a
// default_baseline_row, no lines and a note saying so.
Comparison compare_to_baseline(Db& db, const CompareRequest& request);

// The lines as text for a terminal of 100 columns: per row its label, then task, metric, test,
// n, diff, se and p; with `details`, each line's baseline and row values, unpaired se and detail.
std::string render_comparison_text(const Comparison& comparison, bool details);

// `results table --baseline`: runs the tests of compare_to_baseline on `table` (built by
// build_table from request.table) and sets each cell's vs_baseline to the line that decides it:
// the paired bootstrap over items of the column's measure (acc for acc, acc_norm for acc_norm when
// the samples hold the choices' lengths; the gold log-likelihood
// for logprob, bits_per_byte and perplexities, which with the same items are monotone in it) when
// every run of both rows has samples of the task, else the one-sided Welch test over seeds of the
// column's metric when it has a p, else none. Marks the baseline row and sets table.baseline.
void mark_against_baseline(Db& db, ResultTable& table, const CompareRequest& request);

}  // namespace attnbench::results
