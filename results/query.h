// The paper-style results table of a sweep, read from the store (the views of single runs are
// results/runs.h). User input (sweep names, param keys and values) reaches SQL only as bound
// parameters; keys are also checked against those present in the store.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnbench::results {

class Db;

enum class MetricChoice {
  Auto,        // acc_norm where the task reports it, else acc (what lm-eval papers print)
  Acc,         // acc everywhere
  AccNorm,     // acc_norm only; tasks without it show as missing
  // The gold continuation's signals (docs/evaluation.md, "Gold log-likelihood and bits per
  // byte"), one column per task, the only column of the task; tasks without it show as missing.
  Logprob,     // mean log-likelihood of the gold continuation per document, nats; higher is better
  BitsPerByte  // -sum ll / sum bytes / ln 2 of the gold continuations (WikiText's too); lower
};
// auto | acc | acc_norm | logprob | bits_per_byte, else a UsageError with a did-you-mean.
MetricChoice parse_metric_choice(const std::string& s);
// Those names, in that order (for help texts).
std::vector<std::string> metric_choice_names();

struct TableRequest {
  std::string sweep;
  // Instead of a sweep: these runs (full ids), e.g. standalone `attnbench train` runs scored with
  // `eval --db`; the sweep is then ignored.
  std::vector<std::string> runs;
  std::vector<std::string> rows;  // param keys to group by; empty = the default (see table_rows)
  MetricChoice metric = MetricChoice::Auto;
  std::vector<std::string> tasks;  // empty = every task evaluated in the sweep, in recorded order
  std::vector<std::pair<std::string, std::string>> where;  // keep runs whose param key == value
};

// One column: a task and the metric shown for it.
struct Column {
  std::string task;
  std::string metric;
  bool lower_is_better = false;  // perplexities, bits per byte
  bool accuracy = false;         // a fraction of items right, shown in %
  // An accuracy of one of the paper's nine tasks (core/common/paper_tasks.h): it enters Avg, as
  // the paper's Avg does; LAMBADA's and Social IQa's accuracies are shown but not averaged.
  bool in_average = false;
  // An attention statistic of the model (task "attention": sink_mass, sparsity; model-level rows
  // of attn_stats), not a task score: never marked best, never averaged.
  bool diagnostic = false;

  // acc / acc_norm of `task`; in Avg when the task is one of the paper's nine.
  static Column accuracy_of(const std::string& task, const std::string& metric);
  // A score where lower is better (perplexity, bits per byte), or higher (logprob): never in Avg.
  static Column score_of(const std::string& task, const std::string& metric, bool lower_is_better);
  static Column diagnostic_of(const std::string& stat);  // task "attention"
  static Column average();  // how the Avg column is formatted: as an accuracy
};

// `results table --baseline`: a cell's difference to the baseline row's by the test that decides
// it (results/compare.h, mark_against_baseline), exactly as `results compare` prints that line.
struct BaselineTest {
  std::string measure;  // the column's metric (over seeds), or acc / gold_loglikelihood (items)
  std::string test;     // "paired bootstrap, two-sided (items)" | "Welch t, one-sided (seeds)"
  std::string n;        // "500 items", "20 items x 2 seed pairs", "3 vs 3 seeds"
  double diff = 0;      // row - baseline in the measure (accuracies as fractions)
  double p = 1;
  enum class Mark { None, Better, Worse } mark = Mark::None;  // at p < kBaselineAlpha
};
constexpr double kBaselineAlpha = 0.05;

// The runs of one row for one column. Values are as stored (accuracies as fractions).
struct Cell {
  int n = 0;                   // finished runs of the row that have this value; 0 = missing
  double mean = 0;
  std::optional<double> std;   // sample standard deviation over seeds (n - 1); needs n >= 2
  // Standard error of the mean from the evals' stderr column: sqrt(sum se_i^2) / n (test-set
  // sampling noise of the seed-average); nullopt when any run lacks a stderr.
  std::optional<double> std_error;
  bool best = false;           // the column's best mean
  bool within_std_error = false;  // not the best, but |mean - best| <= sqrt(se^2 + se_best^2)
  std::optional<BaselineTest> vs_baseline;  // with --baseline, when some test applies
  // Some run of the cell was scored on other items, protocol or BOS policy than most of the
  // column's (kOtherScoringMarker): the cell does not compare with the rest of its column.
  bool other_scoring = false;
};

struct AvgCell {
  int tasks_present = 0;       // accuracy columns with a value in this row
  int tasks_total = 0;         // accuracy columns in the table
  double mean = 0;             // mean of the present columns' means
  std::optional<double> std;   // sample std over runs of each run's average; only when complete
  bool complete() const { return tasks_present == tasks_total && tasks_total > 0; }
};

struct Row {
  std::vector<std::string> keys;  // values of TableRequest rows, "" where a run lacks the param
  int n = 0;                      // finished runs (seeds) in the row
  std::vector<std::string> runs;  // their ids
  std::vector<Cell> cells;        // one per column
  std::optional<AvgCell> avg;     // nullopt when no accuracy column has a value
  std::string note;               // e.g. "1 diverged, 1 running: not included"
  bool baseline = false;          // the --baseline row
};

// The --baseline of a table: which row, and the settings that reproduce its tests.
struct BaselineInfo {
  std::string selector;  // as given: key=value[,key=value] or a run id (prefix)
  std::string row;       // the row's label, "attention.variant=softmax"
  int64_t resamples = 0;  // of the paired bootstrap
  uint64_t seed = 0;
};

struct ResultTable {
  std::string sweep;               // "" when the table is over runs named one by one
  std::vector<std::string> runs;   // those runs (TableRequest::runs)
  std::string metric_choice;      // auto | acc | acc_norm | logprob | bits_per_byte
  std::vector<std::string> row_keys;
  std::vector<Column> columns;
  std::vector<Row> rows;
  bool has_avg = false;           // at least one accuracy column
  std::vector<std::string> notes; // facts about the data the renderers must print (footnotes)
  std::optional<BaselineInfo> baseline;  // set by mark_against_baseline (results/compare.h)
};

// The paper-style table (docs/results.md, "`attnbench results table`", for the exact semantics).
// Without request.rows, rows group by attention.variant plus every param that varies among the
// selected runs except train.seed, skipping params determined by those already chosen (a variant
// preset expands into position/normaliser params that would otherwise repeat the variant).
ResultTable build_table(Db& db, const TableRequest& request);

}  // namespace attnbench::results
