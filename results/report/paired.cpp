// The report's "paired" section: every row against the baseline row, the lines of
// `results compare` (results/compare.h).
#include <algorithm>
#include <cmath>

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

// The line a matrix cell shows for (row, task): the paired bootstrap over items of the task's
// headline measure (acc_norm, else acc, else the gold log-likelihood), else the Welch test over
// seeds of acc_norm or acc; nullptr when none has a p.
const ComparisonLine* headline(const Comparison& c, size_t row, const std::string& task) {
  for (const char* test : {kBootstrapTest, kWelchTest}) {
    for (const char* metric : {"acc_norm", "acc", "gold_loglikelihood"}) {
      for (const ComparisonLine& l : c.lines) {
        if (l.row == row && l.task == task && l.test == test && l.metric == metric && std::isfinite(l.p)) return &l;
      }
    }
  }
  return nullptr;
}

// Rows against tasks, one difference per cell, marked where p < kBaselineAlpha; p, test and n in
// the cell's title.
std::string matrix(const Comparison& c) {
  std::vector<std::string> tasks;
  std::vector<std::pair<size_t, std::string>> rows;  // row index, label
  for (size_t i = 0; i < c.lines.size(); ++i) {
    const ComparisonLine& l = c.lines[i];
    if (std::find(tasks.begin(), tasks.end(), l.task) == tasks.end()) tasks.push_back(l.task);
    if (rows.empty() || rows.back().first != l.row) rows.emplace_back(l.row, c.grid.rows[i][0].get<std::string>());
  }
  std::string h = "<table>\n<thead><tr><th>row</th>";
  for (const std::string& t : tasks) h += "<th class=\"num\">" + esc(t) + "</th>";
  h += "</tr></thead>\n<tbody>\n";
  for (const auto& [row, label] : rows) {
    h += "<tr><td>" + esc(label) + "</td>";
    for (const std::string& t : tasks) {
      const ComparisonLine* l = headline(c, row, t);
      if (!l) {
        h += kMissingCell;
        continue;
      }
      const bool marked = l->p < kBaselineAlpha;
      const char* mark = !marked ? "" : l->diff > 0 ? " ▲" : " ▼";
      h += fmt::format("<td class=\"num\" title=\"{}: p = {:.3g}, {}, {}\">{:+.3f}{}</td>", esc(l->metric), l->p,
                       esc(l->test), esc(l->n), l->diff, mark);
    }
    h += "</tr>\n";
  }
  return h + "</tbody>\n</table>\n";
}

// Every row against the baseline row (results/compare.h): a matrix of rows against tasks, then
// every line of `results compare`, collapsed.
std::string paired_section(const Comparison& c) {
  std::string h = "<section id=\"paired\">\n<h2>Paired differences against a baseline row</h2>\n";
  if (c.grid.rows.empty()) {
    h += "<p class=\"note\">No differences to test.</p>\n";
  } else {
    h += matrix(c);
    h += fmt::format("<details><summary>Every test: {} lines, as <code>attnbench results compare</code> "
                     "prints them</summary>\n<table>\n<thead><tr>", c.grid.rows.size());
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
    h += "</tbody>\n</table>\n</details>\n";
  }
  h += "<ul class=\"notes\">\n";
  for (const auto& n : c.notes) h += "<li>" + esc(n) + "</li>\n";
  h += "<li>Matrix: row minus baseline of each task's headline measure, acc_norm, else acc (as "
       "fractions), else the gold log-likelihood (nats per item), from the paired bootstrap over "
       "items, else the Welch test over seeds; ▲ better, ▼ worse at p &lt; 0.05; the cell's "
       "tooltip gives its p, test and n.</li>\n";
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
