// The shared parts of `attnbench report` (results/report/report.h): the page every section reads,
// the section registry, a table row's attention statistics, and the small HTML and SVG helpers the
// sections have in common. Each section is one file in results/report/ that registers itself with
// a RegisterReportSection; the page shows them in their `order`.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "results/compare.h"
#include "results/paired.h"
#include "results/query.h"
#include "results/report/report.h"
#include "results/runs.h"
#include "results/table.h"

namespace attnbench::results {

class Db;

// (layer, head, stat, idx) -> value of one run's attention statistics.
using StatKey = std::tuple<int64_t, int64_t, std::string, int64_t>;
using RunStats = std::map<StatKey, double>;

// One row of the results table with its runs' attention statistics.
struct RowData {
  std::string label;
  std::vector<const RunStats*> stats;  // runs of the row that have statistics
  std::set<std::string> learned;       // which of their statistics are learned, not measured
  // How the runs with statistics measured them (AttnMeasurement::describe, or
  // kUnrecordedMeasurement); rows measured otherwise than most of the page's are marked `‡` in
  // every attention section and do not compare with the rest (measurement_note says how).
  std::set<std::string> measured;
  bool measured_otherwise = false;
  // The row's label in the attention sections: with the mark when measured otherwise.
  std::string stat_label() const { return measured_otherwise ? label + " \u2021" : label; }

  // Mean over the row's runs that have the statistic.
  std::optional<double> mean(int64_t layer, int64_t head, const std::string& stat, int64_t idx = -1) const {
    double sum = 0;
    int n = 0;
    for (const RunStats* s : stats) {
      auto it = s->find({layer, head, stat, idx});
      if (it == s->end()) continue;
      sum += it->second;
      ++n;
    }
    if (n == 0) return std::nullopt;
    return sum / n;
  }
  // A model-level statistic (layer = head = -1) over the row's runs that have it: the mean, the
  // sample standard deviation (n - 1, needs n >= 2) and n; nullopt when no run has it.
  struct Spread {
    double mean = 0;
    std::optional<double> std;
    int n = 0;
  };
  std::optional<Spread> model_spread(const std::string& stat) const {
    const std::vector<double> v = model_values(stat);
    if (v.empty()) return std::nullopt;
    return Spread{mean_of(v), sample_std(v), static_cast<int>(v.size())};
  }
  // A model-level statistic (layer = head = -1) in each of the row's runs that has it.
  std::vector<double> model_values(const std::string& stat, int64_t idx = -1) const {
    std::vector<double> v;
    for (const RunStats* s : stats) {
      auto it = s->find({-1, -1, stat, idx});
      if (it != s->end()) v.push_back(it->second);
    }
    return v;
  }
  // One past the largest layer (head -1 rows) carrying `stat`.
  int64_t layers(const std::string& stat) const {
    int64_t n = 0;
    for (const RunStats* s : stats) {
      for (const auto& [k, v] : *s) {
        if (std::get<1>(k) == -1 && std::get<2>(k) == stat) n = std::max(n, std::get<0>(k) + 1);
      }
    }
    return n;
  }
  // Fixed-token (Mask@k) position recorded in the model summary, or -1.
  int64_t fixed_position() const {
    for (const RunStats* s : stats) {
      for (const auto& [k, v] : *s) {
        if (std::get<0>(k) == -1 && std::get<2>(k) == "fixed_token_mass") return std::get<3>(k);
      }
    }
    return -1;
  }
};

// What every section is drawn from.
struct ReportPage {
  Db& db;
  const ReportOptions& options;          // options.out: the folder figures are written to
  const std::vector<SweepMember>& members;
  const ResultTable& table;               // the sweep's default table
  const std::vector<RowData>& rows;       // one per table row, same order
  bool any_stats = false;                 // some row has attention statistics
  const Comparison& paired;               // every row against the baseline row
};

// One section of the page: <section id="id">, linked from the navigation as `nav`.
struct ReportSection {
  const char* id = "";
  const char* nav = "";
  int order = 0;  // position on the page, ascending; two sections never share one
  std::string (*render)(const ReportPage&) = nullptr;
};

struct RegisterReportSection {
  explicit RegisterReportSection(ReportSection section);
};

// The registered sections in page order.
std::vector<const ReportSection*> report_sections();

// The table's rows with the attention statistics of their finished runs; the statistics are kept
// in `stats`, which the rows point into.
std::vector<RowData> row_data(Db& db, const ResultTable& table, std::map<std::string, RunStats>& stats);

// How the page's attention statistics were measured, for each attention section: one sentence
// when every row's were measured alike, else which rows (marked ‡) were measured how.
std::string measurement_note(const std::vector<RowData>& rows);

// The accuracy of guessing `task`: the mean over a run's scored documents of 1 / their choices,
// read from the samples of the table's first run that has some (one request per choice); nullopt
// without samples, or when some document has a single request (LAMBADA's exact match, whose chance
// is about 0, not 1).
std::optional<double> chance_level(Db& db, const ResultTable& table, const std::string& task);
// (step, value) of one run's metric `key`, by step, non-finite values left out.
std::vector<std::pair<double, double>> load_curve(Db& db, const std::string& run, const std::string& key);

// `text` into `path`; throws naming the file when it cannot be written.
void write_text(const std::filesystem::path& path, const std::string& text);

// `s` escaped for HTML text and attribute values.
std::string esc(const std::string& s);
// "a / b" of the row's key values; the sweep's name when the table has no row keys.
std::string row_label(const ResultTable& t, const Row& r);

// A statistic to 3 decimals; kMissing when absent.
std::string fmt_stat(const std::optional<double>& v, int decimals = 3);
// A <figure> of the image `file` (relative to the report folder), `caption` as its alt text too.
std::string figure(const std::string& file, const std::string& caption);

extern const std::string kMissingCell;  // <td> of a missing value

struct SummaryColumn {
  const char* stat;
  const char* label;
  const char* doc;
};
// The model-level statistics the attention summary lists, in its column order.
extern const SummaryColumn kSummary[9];

// One per-layer chart: a statistic's layer rows (head = -1, the mean over heads where it is per
// head), one line per table row. Written to `<stat>_per_layer.svg`; "" when no row has it.
struct LayerPlot {
  std::string stat;
  std::string title;
  int64_t idx = -1;
  std::optional<double> y_min, y_max;
  bool log_y = false;
};

std::string per_layer_chart(const std::vector<RowData>& rows, const LayerPlot& p, const ReportOptions& o);

}  // namespace attnbench::results
