// The report's "task-bars" section: per-task accuracy of every row, whiskers = standard error.
#include <algorithm>

#include <fmt/format.h>

#include "results/report/page.h"
#include "results/sqlite.h"
#include "results/svg.h"
#include "results/table.h"

namespace attnbench::results {

namespace {

// Per-task accuracy bars, each task's chance level dashed across its group.
std::string task_bars_section(Db& db, const ResultTable& table, const ReportOptions& o) {
  std::string h = "<section id=\"task-bars\">\n<h2>Per-task accuracy</h2>\n";
  BarChart c;
  c.title = "accuracy per task (%), whiskers: standard error of the mean";
  c.y_label = "accuracy (%)";
  c.y_max = 100;
  for (const auto& r : table.rows) c.series.push_back(row_label(table, r));
  for (size_t col = 0; col < table.columns.size(); ++col) {
    if (!table.columns[col].accuracy) continue;  // perplexities are on another scale
    c.groups.push_back(table.columns[col].task);
    const std::optional<double> chance = chance_level(db, table, table.columns[col].task);
    c.reference.push_back(chance ? std::optional<double>(100 * *chance) : std::nullopt);
    std::vector<Bar> bars;
    for (const auto& r : table.rows) {
      const Cell& cell = r.cells[col];
      Bar b;
      if (cell.n > 0) b.value = 100 * cell.mean;
      if (cell.n > 0 && cell.std_error) b.whisker = 100 * *cell.std_error;
      bars.push_back(b);
    }
    c.values.push_back(std::move(bars));
  }
  if (c.groups.empty()) {
    h += "<p class=\"note\">No accuracy results recorded.</p>\n";
  } else {
    c.width = std::max(720, 80 + static_cast<int>(c.groups.size() * (20 + 14 * c.series.size())));
    write_text(o.out / "task_bars.svg", render_bar_chart(c));
    h += figure("task_bars.svg", "accuracy per task and row (" + table.metric_choice +
                                     " metric choice), dashed: chance (1 / choices over the items "
                                     "scored); perplexities are in the table only");
  }
  return h + "</section>\n";
}

std::string render(const ReportPage& page) {
  return task_bars_section(page.db, page.table, page.options);
}

ReportSection section() {
  ReportSection s;
  s.id = "task-bars";
  s.nav = "per-task bars";
  s.order = 70;
  s.render = render;
  return s;
}

const RegisterReportSection kRegistered(section());

}  // namespace

}  // namespace attnbench::results
