// The report's "paired" section: every row against the baseline row, the lines of
// `results compare` (results/compare.h).
#include <algorithm>

#include <fmt/format.h>

#include "results/compare.h"
#include "results/report/page.h"

namespace attnbench::results {

namespace {

// A value of the comparison grid as a table cell: text as is, numbers to 4 significant digits.
std::string grid_cell(const nlohmann::json& v) {
  if (v.is_null()) return kMissingCell;
  if (v.is_number()) return "<td class=\"num\">" + fmt::format("{:.4g}", v.get<double>()) + "</td>";
  return "<td>" + esc(v.is_string() ? v.get<std::string>() : v.dump()) + "</td>";
}

// Every row against the baseline row (results/compare.h): the lines of `results compare`.
std::string paired_section(const Comparison& c) {
  std::string h = "<section id=\"paired\">\n<h2>Paired differences against a baseline row</h2>\n";
  if (c.grid.rows.empty()) {
    h += "<p class=\"note\">No differences to test.</p>\n";
  } else {
    h += "<table>\n<thead><tr>";
    for (std::string name : c.grid.headers) {
      std::replace(name.begin(), name.end(), '_', ' ');
      h += "<th>" + esc(name) + "</th>";
    }
    h += "</tr></thead>\n<tbody>\n";
    for (const auto& line : c.grid.rows) {
      h += "<tr>";
      for (const auto& v : line) h += grid_cell(v);
      h += "</tr>\n";
    }
    h += "</tbody>\n</table>\n";
  }
  h += "<ul class=\"notes\">\n";
  for (const auto& n : c.notes) h += "<li>" + esc(n) + "</li>\n";
  h += "<li>gold_loglikelihood in nats. se: of the "
       "line's test (over seeds: Welch's; over items: the paired bootstrap's), unpaired se: what "
       "a test ignoring the pairing would use. Every p states its test and its n. Tests over items "
       "need per-item samples (<code>attnbench eval --log-samples --db</code>). The same lines as "
       "<code>attnbench results compare</code> (docs/results.md); baseline: <code>attnbench report "
       "--baseline</code>, else the first softmax row with finished runs, else the first row with "
       "finished runs. Tests over items need at least 10 items (docs/results.md).</li>\n";
  return h + "</ul>\n</section>\n";
}

std::string render(const ReportPage& page) {
  return paired_section(page.paired);
}

ReportSection section() {
  ReportSection s;
  s.id = "paired";
  s.nav = "paired differences";
  s.order = 30;
  s.render = render;
  return s;
}

const RegisterReportSection kRegistered(section());

}  // namespace

}  // namespace attnbench::results
