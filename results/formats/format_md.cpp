// `results table --format md`: a GitHub Markdown table, the footnotes below it.
#include <fmt/format.h>

#include "results/table.h"

namespace attnbench::results {

namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string cell_text(const Column& col, const Cell& cell, int row_n) {
  if (cell.n == 0) return kMissing;
  std::string s = format_mean_std(col, cell.mean, cell.std, " ± ");
  if (cell.best) s = "**" + s + "**";
  if (cell.within_std_error) s += std::string(" ") + kTieMarker;
  if (cell.other_scoring) s += std::string(" ") + kOtherScoringMarker;
  if (!baseline_marker(cell).empty()) s += " " + baseline_marker(cell);
  if (cell.n < row_n) s += fmt::format(" (n={})", cell.n);
  return s;
}

std::string line(const std::vector<std::string>& cells) {
  std::string out = "|";
  for (const auto& c : cells) out += " " + c + " |";
  return out + "\n";
}

std::string render_markdown(const ResultTable& t) {
  std::vector<std::string> header;
  for (const auto& k : t.row_keys) header.push_back(escape(k));
  if (t.row_keys.empty()) header.push_back("sweep");
  header.push_back("n");
  for (const Column& c : t.columns) header.push_back(escape(column_label(c)));
  if (t.has_avg) header.push_back("Avg ↑");
  std::string out = line(header);
  std::vector<std::string> rule;
  for (size_t i = 0; i < header.size(); ++i) rule.push_back(i < header.size() - t.columns.size() - t.has_avg ? "---" : "---:");
  out += line(rule);
  const Column avg_column = Column::average();
  for (const Row& r : t.rows) {
    std::vector<std::string> cells;
    for (const auto& v : r.keys) cells.push_back(escape(row_value(v)));
    if (t.row_keys.empty()) cells.push_back(escape(t.sweep));
    if (r.baseline) cells[0] += std::string(" ") + kBaselineLabel;
    cells.push_back(std::to_string(r.n));
    for (size_t c = 0; c < t.columns.size(); ++c) cells.push_back(cell_text(t.columns[c], r.cells[c], r.n));
    if (t.has_avg) {
      if (!r.avg) {
        cells.push_back(kMissing);
      } else {
        std::string s = format_mean_std(avg_column, r.avg->mean, r.avg->std, " ± ");
        if (!r.avg->complete()) s += kIncompleteMarker;
        cells.push_back(s);
      }
    }
    out += line(cells);
  }
  out += "\n";
  for (const auto& note : table_legend(t)) out += "- " + escape(note) + "\n";
  return out;
}

const RegisterTableFormat kMarkdown({"md", "Markdown (GitHub) table with footnotes", render_markdown});

}  // namespace

}  // namespace attnbench::results
