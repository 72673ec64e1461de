// The report's "results" section: the paper-style table (results/query.h build_table) as HTML.
#include <fmt/format.h>

#include "results/report/page.h"
#include "results/table.h"

namespace attnbench::results {

namespace {

// A header that may break after '_' and '.' ("arc_challenge acc_norm", "attention.tau_form"), so
// that the columns are as narrow as their numbers and the table fits the page.
std::string breakable(const std::string& label) {
  std::string out;
  for (char ch : esc(label)) {
    out += ch;
    if (ch == '_' || ch == '.') out += "<wbr>";
  }
  return out;
}

std::string results_table_html(const ResultTable& t) {
  std::string h = "<table>\n<thead><tr>";
  for (const auto& k : t.row_keys) h += "<th>" + breakable(k) + "</th>";
  if (t.row_keys.empty()) h += "<th>sweep</th>";
  h += "<th>n</th>";
  for (const Column& c : t.columns) h += "<th class=\"num\">" + breakable(column_label(c)) + "</th>";
  if (t.has_avg) h += "<th class=\"num\">Avg ↑</th>";
  h += "</tr></thead>\n<tbody>\n";
  const Column avg_column = Column::average();
  for (const Row& r : t.rows) {
    h += "<tr>";
    for (const auto& v : r.keys) h += "<td>" + esc(row_value(v)) + "</td>";
    if (t.row_keys.empty()) h += "<td>" + esc(t.sweep) + "</td>";
    h += fmt::format("<td>{}</td>", r.n);
    for (size_t c = 0; c < t.columns.size(); ++c) {
      const Cell& cell = r.cells[c];
      if (cell.n == 0) {
        h += std::string("<td class=\"num missing\">") + kMissing + "</td>";
        continue;
      }
      std::string s = esc(format_mean_std(t.columns[c], cell.mean, cell.std, " ± "));
      if (cell.best) s = "<b>" + s + "</b>";
      if (cell.within_std_error) s += std::string(" ") + kTieMarker;
      if (cell.other_scoring) s += std::string(" ") + kOtherScoringMarker;
      if (cell.n < r.n) s += fmt::format(" (n={})", cell.n);
      h += "<td class=\"num\">" + s + "</td>";
    }
    if (t.has_avg) {
      if (!r.avg) {
        h += std::string("<td class=\"num missing\">") + kMissing + "</td>";
      } else {
        std::string s = esc(format_mean_std(avg_column, r.avg->mean, r.avg->std, " ± "));
        if (!r.avg->complete()) s += kIncompleteMarker;
        h += "<td class=\"num\">" + s + "</td>";
      }
    }
    h += "</tr>\n";
  }
  h += "</tbody>\n</table>\n<ul class=\"notes\">\n";
  for (const auto& n : table_legend(t)) h += "<li>" + esc(n) + "</li>\n";
  for (const Row& r : t.rows) {
    if (!r.note.empty()) h += "<li>" + esc(row_label(t, r) + ": " + r.note) + "</li>\n";
  }
  return h + "</ul>\n";
}

// The paper-style table (results/query.h build_table).
std::string results_section(const ResultTable& table) {
  std::string h = "<section id=\"results\">\n<h2>Results</h2>\n";
  h += table.rows.empty() ? "<p class=\"note\">No finished runs on this page.</p>\n" : results_table_html(table);
  return h + "</section>\n";
}

std::string render(const ReportPage& page) {
  return results_section(page.table);
}

ReportSection section() {
  ReportSection s;
  s.id = "results";
  s.nav = "results";
  s.order = 10;
  s.render = render;
  return s;
}

const RegisterReportSection kRegistered(section());

}  // namespace

}  // namespace attnbench::results
