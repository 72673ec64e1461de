// The cells of the paper-style table (results/query.h build_table): a row's means, spreads and
// standard errors over its finished runs, its Avg, and the best of each column. Shared by
// query.cpp and table_cells.cpp only; not part of the API.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "results/query.h"
#include "results/store.h"

namespace attnbench::results {

// A run of the sweep selected for the table, with its params.
struct SweepRun {
  std::string id;
  RunStatus status;
  std::map<std::string, std::string> params;
};

struct EvalValue {
  std::optional<double> value;  // NULL (a non-finite value) counts as missing
  std::optional<double> std_error;
  std::string scoring;  // what it was computed on: "200 items, protocol P, bos none"; "" for diagnostics
};

// The stored values of the selected runs: evals (task, metric) and the model-level attention
// statistics (task "attention"), keyed by (run, task, metric).
struct StoredValues {
  std::map<std::tuple<std::string, std::string, std::string>, EvalValue> values;
  std::vector<std::string> task_order;  // tasks in the order they were first recorded
  std::map<std::string, std::set<std::string>> task_metrics;
  std::set<std::string> diagnostics_present;
  std::set<int64_t> sink_windows;  // the window lengths T the sink mass was measured in (recorded measurements)
};

// The runs of each row: finished ones (which the row's cells average) and counts of the others.
struct RowRuns {
  std::vector<const SweepRun*> finished;
  std::map<std::string, int> unfinished;  // status -> runs
};

// A row's cells and its Avg over the accuracy columns (`accuracy_columns` of them), from its runs.
void fill_row(Row& row, const RowRuns& runs, const std::vector<Column>& columns,
              const StoredValues& stored, int accuracy_columns);

// Marks the best row of column c, and the rows whose gap to it is inside the combined stderr.
void mark_best(std::vector<Row>& rows, size_t c, const Column& col);

// A column whose runs were scored on different item counts, protocols or BOS policies mixes
// numbers that do not compare (a 20-item eval beside 200-item sweep rows): each cell with a run
// off the column's most common scoring is marked (Cell::other_scoring), with a note naming them.
void mark_other_scoring(ResultTable& table, const std::vector<RowRuns>& row_runs, const StoredValues& stored);

}  // namespace attnbench::results
