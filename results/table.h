// Rendering of the paper-style results table (results/query.h builds it) in md, csv, latex or json.
// Each format is one file, results/formats/format_<name>.cpp, that registers itself with a
// RegisterTableFormat object; ab_results_formats is linked whole (cmake/Libraries.cmake) so that
// the linker keeps registrations nothing references.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "results/query.h"

namespace attnbench::results {

using TableRenderer = std::string (*)(const ResultTable&);

struct TableFormat {
  const char* name;
  const char* description;
  TableRenderer render;
};

struct RegisterTableFormat {
  explicit RegisterTableFormat(TableFormat format);
};

// The registered format of that name, else a UsageError naming the valid ones.
const TableFormat& find_table_format(const std::string& name);
// The registered formats' names, sorted.
std::vector<std::string> table_format_names();

// find_table_format(format).render(table).
std::string render_table(const ResultTable& table, const std::string& format);

// --- Shared by the renderers, so that every format says the same thing. ---

// Accuracies as percentages with one decimal (45.2), perplexities and logprobs with two (18.37),
// bits per byte with three (1.523: gaps between small models are hundredths).
std::string format_value(const Column& column, double value);
// "45.2 ± 0.3" (n >= 2), "45.2" (n == 1), "" when missing; pm is the "±" spelling of the format.
std::string format_mean_std(const Column& column, double mean, const std::optional<double>& std,
                            const std::string& pm);
// "0.60 ± 0.16": a value to the precision of its standard error (the error to two significant
// digits, the value to the same decimal place); without an error (or a zero one), 4 significant
// digits. For text meant to be read, where 0.6 ± 0.16329931618554522 claims precision it lacks.
std::string format_with_error(double value, const std::optional<double>& std_error);
// "piqa acc_norm ↑", "wikitext word_perplexity ↓".
std::string column_label(const Column& column);
// "lazy / false" style label of a row's key values ("—" where a run lacks the param).
std::string row_value(const std::string& value);

// The footnotes every rendering prints under the table (markers, what mean ± std means, missing
// cells, rows with unfinished runs, notes about the data).
std::vector<std::string> table_legend(const ResultTable& table);

constexpr const char* kMissing = "—";          // a missing cell: never 0
constexpr const char* kTieMarker = "†";        // within the combined stderr of the best
constexpr const char* kOtherScoringMarker = "‡";  // a run scored on other items/protocol/BOS
constexpr const char* kIncompleteMarker = "*"; // Avg over the accuracy tasks present only
constexpr const char* kBetterMarker = "▲";     // better than the --baseline row at p < 0.05
constexpr const char* kWorseMarker = "▼";      // worse than the --baseline row at p < 0.05
constexpr const char* kBaselineLabel = "(baseline)";  // after the baseline row's first key

// The cell's ▲ / ▼ against the baseline, "" when it has none.
std::string baseline_marker(const Cell& cell);
// Its standing in words for csv and json: better | worse | not_significant ("" without a test).
std::string baseline_standing(const Cell& cell);

}  // namespace attnbench::results
