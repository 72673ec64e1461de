// The report's "diagnostics" section: model-level attention statistics (attn_stats rows with
// layer = head = -1), one line per table row.
#include <fmt/format.h>

#include "results/report/page.h"

namespace attnbench::results {

namespace {

std::string diagnostics_html(const std::vector<RowData>& rows) {
  bool any_fixed = false;
  for (const auto& r : rows) any_fixed = any_fixed || r.fixed_position() >= 0;
  std::string h = "<table>\n<thead><tr><th>row</th><th>runs</th>";
  for (const auto& c : kSummary) h += fmt::format("<th class=\"num\" title=\"{}\">{}</th>", esc(c.doc), esc(c.label));
  if (any_fixed) h += "<th class=\"num\">mass at k (Mask@k)</th>";
  h += "</tr></thead>\n<tbody>\n";
  for (const auto& r : rows) {
    h += "<tr><td>" + esc(r.stat_label()) + "</td>" + fmt::format("<td>{}</td>", r.stats.size());
    for (const auto& c : kSummary) h += "<td class=\"num\">" + fmt_stat(r.mean(-1, -1, c.stat)) + "</td>";
    if (any_fixed) {
      const int64_t k = r.fixed_position();
      h += "<td class=\"num\">" +
           (k >= 0 ? fmt_stat(r.mean(-1, -1, "fixed_token_mass", k)) + fmt::format(" (k={})", k)
                   : std::string(kMissing)) +
           "</td>";
    }
    h += "</tr>\n";
  }
  return h + "</tbody>\n</table>\n";
}

// Model-level attention statistics.
std::string diagnostics_section(const std::vector<RowData>& rows, bool any_stats) {
  std::string h = "<section id=\"diagnostics\">\n<h2>Attention summary (mean over layers and heads)</h2>\n";
  if (any_stats) {
    h += diagnostics_html(rows) + measurement_note(rows);
    h += "<p class=\"notes\">Definitions: docs/diagnostics.md. Values are means over the row's runs "
         "that have statistics (column runs).</p>\n";
  } else {
    h += "<p class=\"note\">No attention statistics recorded for the finished runs of this page: run "
         "<code>attnbench attn-stats --checkpoint runs/RUN --db DB</code> for each.</p>\n";
  }
  return h + "</section>\n";
}

std::string render(const ReportPage& page) {
  return diagnostics_section(page.rows, page.any_stats);
}

ReportSection section() {
  ReportSection s;
  s.id = "diagnostics";
  s.nav = "attention summary";
  s.order = 40;
  s.render = render;
  return s;
}

const RegisterReportSection kRegistered(section());

}  // namespace

}  // namespace attnbench::results
