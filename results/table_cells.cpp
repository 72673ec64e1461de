// The cells of the paper-style table (results/table_cells.h).
#include "results/table_cells.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/common/error.h"
#include "results/paired.h"
#include "results/table.h"

namespace attnbench::results {

namespace {

std::string status_note(const std::map<std::string, int>& unfinished) {
  if (unfinished.empty()) return "";
  std::vector<std::string> parts;
  for (const auto& [status, n] : unfinished) parts.push_back(fmt::format("{} {}", n, status));
  return join(parts) + ": not included";
}

// One cell: the mean and spread over the row's finished runs of the column's value. Adds each
// run's accuracy to run_sum / run_count, from which the row's per-run averages are made.
Cell column_cell(const Column& col, const std::vector<const SweepRun*>& finished,
                 const StoredValues& stored, std::vector<double>& run_sum,
                 std::vector<int>& run_count) {
  Cell cell;
  std::vector<double> values;
  double se_sq = 0;
  bool all_se = true;
  for (size_t k = 0; k < finished.size(); ++k) {
    auto it = stored.values.find({finished[k]->id, col.task, col.metric});
    if (it == stored.values.end() || !it->second.value) continue;
    values.push_back(*it->second.value);
    if (it->second.std_error) {
      se_sq += *it->second.std_error * *it->second.std_error;
    } else {
      all_se = false;
    }
    if (col.in_average) {
      run_sum[k] += *it->second.value;
      ++run_count[k];
    }
  }
  cell.n = static_cast<int>(values.size());
  if (cell.n > 0) {
    cell.mean = mean_of(values);
    cell.std = sample_std(values);
    if (all_se) cell.std_error = std::sqrt(se_sq) / cell.n;
  }
  return cell;
}

}  // namespace

void fill_row(Row& row, const RowRuns& runs, const std::vector<Column>& columns,
              const StoredValues& stored, int accuracy_columns) {
  row.n = static_cast<int>(runs.finished.size());
  for (const SweepRun* r : runs.finished) row.runs.push_back(r->id);
  row.note = status_note(runs.unfinished);
  // Per run: the sum of its accuracy columns, to give each run's own average when it has all.
  std::vector<double> run_sum(runs.finished.size(), 0.0);
  std::vector<int> run_count(runs.finished.size(), 0);
  AvgCell avg;
  avg.tasks_total = accuracy_columns;
  double sum_of_means = 0;
  for (const Column& col : columns) {
    Cell cell = column_cell(col, runs.finished, stored, run_sum, run_count);
    if (cell.n > 0 && col.in_average) {
      ++avg.tasks_present;
      sum_of_means += cell.mean;
    }
    row.cells.push_back(cell);
  }
  if (avg.tasks_present > 0) {
    avg.mean = sum_of_means / avg.tasks_present;
    std::vector<double> run_avgs;
    for (size_t k = 0; k < run_sum.size(); ++k) {
      if (run_count[k] == accuracy_columns) run_avgs.push_back(run_sum[k] / accuracy_columns);
    }
    // The spread of the average over seeds is only meaningful when every run has every task.
    if (avg.complete() && run_avgs.size() == runs.finished.size()) avg.std = sample_std(run_avgs);
    row.avg = avg;
  }
}

void mark_best(std::vector<Row>& rows, size_t c, const Column& col) {
  std::optional<double> best;
  for (const Row& row : rows) {
    const Cell& cell = row.cells[c];
    if (cell.n == 0) continue;
    if (!best || (col.lower_is_better ? cell.mean < *best : cell.mean > *best)) best = cell.mean;
  }
  if (!best) return;
  std::vector<Cell*> best_cells;
  size_t with_values = 0;
  for (Row& row : rows) {
    with_values += row.cells[c].n > 0;
    if (row.cells[c].n > 0 && row.cells[c].mean == *best) best_cells.push_back(&row.cells[c]);
  }
  // Every row the same: nothing is best (a tie at 0.0 in every row is not a result).
  if (best_cells.size() == with_values && with_values > 1) return;
  for (Cell* b : best_cells) b->best = true;
  for (Row& row : rows) {
    Cell& cell = row.cells[c];
    if (cell.n == 0 || cell.best || !cell.std_error) continue;
    for (const Cell* b : best_cells) {
      if (!b->std_error) continue;
      double combined = std::sqrt(*b->std_error * *b->std_error + *cell.std_error * *cell.std_error);
      if (std::abs(cell.mean - b->mean) <= combined) cell.within_std_error = true;
    }
  }
}

void mark_other_scoring(ResultTable& table, const std::vector<RowRuns>& row_runs, const StoredValues& stored) {
  for (size_t c = 0; c < table.columns.size(); ++c) {
    const Column& col = table.columns[c];
    std::map<std::string, int> runs_of;  // scoring -> runs of the column scored so
    const auto scoring = [&](const SweepRun* r) -> const std::string* {
      auto it = stored.values.find({r->id, col.task, col.metric});
      return it == stored.values.end() || !it->second.value ? nullptr : &it->second.scoring;
    };
    for (const RowRuns& rr : row_runs) {
      for (const SweepRun* r : rr.finished) {
        if (const std::string* s = scoring(r)) ++runs_of[*s];
      }
    }
    if (runs_of.size() < 2) continue;
    const auto most = std::max_element(runs_of.begin(), runs_of.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
    for (size_t ri = 0; ri < row_runs.size(); ++ri) {
      for (const SweepRun* r : row_runs[ri].finished) {
        const std::string* s = scoring(r);
        if (s && *s != most->first) table.rows[ri].cells[c].other_scoring = true;
      }
    }
    std::vector<std::string> kinds;
    for (const auto& [s, n] : runs_of) kinds.push_back(fmt::format("{} ({} run{})", s, n, n == 1 ? "" : "s"));
    table.notes.push_back(fmt::format("{} {}: runs scored differently: {}; {} marks the cells with a run "
                                      "off the most common ({}), which do not compare with the rest",
                                      col.task, col.metric, join(kinds, "; "), kOtherScoringMarker, most->first));
  }
}

}  // namespace attnbench::results
