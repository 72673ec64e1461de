// The report's "side-by-side" section: per table row, where its attention goes beside what it
// scores, and a scatter of sink mass against Avg accuracy.
#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "results/report/page.h"
#include "results/svg.h"
#include "results/table.h"

namespace attnbench::results {

namespace {

// The statistics the side-by-side table shows (kSummary's entries of these names), each only when
// some row has it: the table answers "how much sink, how many sinking heads, how sparse" (exact
// zeros beside the non-zero ratio, which shows whether the zeros replaced negligible weights).
constexpr const char* kSideBySide[] = {"sink_mass", "sink_rate", "sparsity", "nonzero_ratio"};

// "0.412 ± 0.013", with "(n=k)" when fewer of the row's `seeds` runs have the statistic.
std::string spread_cell(const std::optional<RowData::Spread>& v, int seeds) {
  if (!v) return kMissingCell;
  std::string s = fmt_stat(v->mean);
  if (v->std) s += " ± " + fmt_stat(v->std);
  if (v->n < seeds) s += fmt::format(" (n={})", v->n);
  return "<td class=\"num\">" + esc(s) + "</td>";
}

// The side-by-side table: per row of the results table, its seeds, its model-level statistics and
// its accuracies (Avg as the table computes it, then each task's mean).
std::string side_by_side_html(const ResultTable& t, const std::vector<RowData>& rows) {
  std::vector<const SummaryColumn*> stats;
  for (const auto& c : kSummary) {
    const bool shown = std::find(std::begin(kSideBySide), std::end(kSideBySide), std::string(c.stat)) !=
                       std::end(kSideBySide);
    const auto has = [&](const RowData& r) { return r.model_spread(c.stat).has_value(); };
    if (shown && std::any_of(rows.begin(), rows.end(), has)) stats.push_back(&c);
  }
  const auto th = [](const std::string& title, const std::string& label) {
    return "<th class=\"num\" title=\"" + esc(title) + "\">" + esc(label) + "</th>";
  };
  std::string h = "<table>\n<thead><tr><th>row</th><th>seeds</th>";
  for (const SummaryColumn* c : stats) h += th(c->doc, c->label);
  if (t.has_avg) h += "<th class=\"num\">Avg acc ↑</th>";
  for (const Column& c : t.columns) {
    if (c.accuracy) h += th(column_label(c), c.task);
  }
  h += "</tr></thead>\n<tbody>\n";
  const Column avg_column = Column::average();
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const Row& r = t.rows[i];
    h += "<tr><td>" + esc(rows[i].stat_label()) + fmt::format("</td><td>{}</td>", r.n);
    for (const SummaryColumn* c : stats) h += spread_cell(rows[i].model_spread(c->stat), r.n);
    if (t.has_avg) {
      h += !r.avg ? kMissingCell
                  : "<td class=\"num\">" + esc(format_mean_std(avg_column, r.avg->mean, r.avg->std, " ± ")) +
                        (r.avg->complete() ? "" : kIncompleteMarker) + "</td>";
    }
    for (size_t c = 0; c < t.columns.size(); ++c) {
      if (!t.columns[c].accuracy) continue;
      const Cell& cell = r.cells[c];
      h += cell.n == 0 ? kMissingCell
                       : "<td class=\"num\">" + esc(format_value(t.columns[c], cell.mean)) +
                             (cell.n < r.n ? fmt::format(" (n={})", cell.n) : "") + "</td>";
    }
    h += "</tr>\n";
  }
  return h + "</tbody>\n</table>\n";
}

// The standard error of a row's Avg accuracy from its tasks' (Cell::std_error): Avg is the mean of
// k task accuracies scored on independent items, so its error is sqrt(sum se_t^2) / k. nullopt
// when the Avg is over fewer tasks than the table's, or some task has no stderr.
std::optional<double> avg_std_error(const ResultTable& t, const Row& r) {
  if (!r.avg || !r.avg->complete()) return std::nullopt;
  double sum = 0;
  int k = 0;
  for (size_t c = 0; c < t.columns.size(); ++c) {
    if (!t.columns[c].in_average) continue;
    if (!r.cells[c].std_error) return std::nullopt;
    sum += *r.cells[c].std_error * *r.cells[c].std_error;
    ++k;
  }
  return k == 0 ? std::nullopt : std::optional<double>(std::sqrt(sum) / k);
}

// The accuracy of guessing on Avg's tasks: the mean of their chance levels (page.h chance_level);
// nullopt when some task's is unknown.
std::optional<double> avg_chance(Db& db, const ResultTable& t) {
  double sum = 0;
  int k = 0;
  for (const Column& c : t.columns) {
    if (!c.in_average) continue;
    const std::optional<double> chance = chance_level(db, t, c.task);
    if (!chance) return std::nullopt;
    sum += *chance;
    ++k;
  }
  return k == 0 ? std::nullopt : std::optional<double>(sum / k);
}

// Sink mass against Avg accuracy, one labelled point per row that has both, with whiskers (y: the
// Avg's standard error; x: the sink mass's std over seeds) and the chance level dashed: the y-axis
// reaches chance, so that a gap between two points reads against how far both are above guessing.
// "" when no row has both.
std::string sink_vs_accuracy(const ReportPage& page) {
  const ResultTable& t = page.table;
  ScatterChart c;
  c.title = "sink mass vs average accuracy (one point per row)";
  c.x_label = "sink mass (model mean; whiskers: std over seeds)";
  c.y_label = "Avg accuracy (%; whiskers: stderr)";
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const auto sink = page.rows[i].model_spread("sink_mass");
    const auto& avg = t.rows[i].avg;
    if (!sink || !avg) continue;
    ScatterPoint p;
    p.label = page.rows[i].stat_label() + (avg->complete() ? "" : kIncompleteMarker);
    p.x = sink->mean;
    p.y = 100 * avg->mean;
    p.x_error = sink->std;
    if (const auto se = avg_std_error(t, t.rows[i])) p.y_error = 100 * *se;
    c.points.push_back(p);
  }
  if (c.points.empty()) return "";
  if (const auto chance = avg_chance(page.db, t)) {
    c.y_reference = 100 * *chance;
    c.y_reference_label = "chance";
  }
  write_text(page.options.out / "sink_vs_accuracy.svg", render_scatter_chart(c));
  return figure("sink_vs_accuracy.svg", c.title + ": whiskers are the Avg's standard error (sqrt(Σ se²) / k "
                "over its k tasks) and the sink mass's std over seeds; dashed: chance (the mean of the "
                "tasks' 1 / choices)");
}

// Every row side by side: where its attention goes next to what it scores (does curing the
// attention sink cost accuracy?).
std::string side_by_side_section(const ReportPage& page) {
  const ResultTable& table = page.table;
  std::string h = "<section id=\"side-by-side\">\n<h2>Variants side by side: attention sink and "
                  "accuracy</h2>\n";
  if (!page.any_stats && !table.has_avg) {
    return h + "<p class=\"note\">Nothing to compare yet: no attention statistics or accuracies "
               "recorded for the finished runs of this page.</p>\n</section>\n";
  }
  h += side_by_side_html(table, page.rows) + measurement_note(page.rows);
  h += "<p class=\"notes\">One row per row of the results table (its runs averaged over seeds). "
       "Statistics: model-level means (docs/diagnostics.md), mean ± sample std over the row's runs "
       "that have them, (n=k) when fewer than its seeds do. Accuracies in % (" +
       esc(table.metric_choice) + " metric choice); Avg as in the results table, " +
       kIncompleteMarker + " = over the tasks present only; per-task ± and stderr markers are in "
       "the results table.</p>\n";
  h += sink_vs_accuracy(page);
  return h + "</section>\n";
}

ReportSection section() {
  ReportSection s;
  s.id = "side-by-side";
  s.nav = "side by side";
  s.order = 20;
  s.render = side_by_side_section;
  return s;
}

const RegisterReportSection kRegistered(section());

}  // namespace

}  // namespace attnbench::results
