// The report's "sink-rate" section: Sink_k and alpha_k of Gu et al. by key position k, alpha_k
// beside its uniform-attention baseline.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/common/error.h"
#include "results/report/page.h"
#include "results/svg.h"

namespace attnbench::results {

namespace {

// Distinct values as text ("64", or "8/64" when the runs differ).
std::string distinct(const std::vector<double>& values) {
  std::set<double> d(values.begin(), values.end());
  std::vector<std::string> parts;
  for (double v : d) parts.push_back(fmt::format("{:g}", v));
  return parts.empty() ? std::string(kMissing) : join(parts, "/");
}

// The largest key position k of the model-level sink_k rows of any row (0: none recorded).
int64_t sink_k_positions(const std::vector<RowData>& rows) {
  int64_t k = 0;
  for (const auto& r : rows) {
    for (const RunStats* s : r.stats) {
      for (const auto& [key, v] : *s) {
        if (std::get<0>(key) == -1 && std::get<1>(key) == -1 && std::get<2>(key) == "sink_k") {
          k = std::max(k, std::get<3>(key));
        }
      }
    }
  }
  return k;
}

// Sink_k per row as a table and a chart, k = 1..K.
std::string sink_k_table_and_chart(const std::vector<RowData>& rows, int64_t positions, const ReportOptions& o) {
  std::string h = "<table>\n<thead><tr><th>row</th><th>runs</th><th>T</th><th>epsilon</th>";
  for (int64_t k = 1; k <= positions; ++k) h += fmt::format("<th class=\"num\">Sink_{}</th>", k);
  h += "</tr></thead>\n<tbody>\n";
  LineChart c;
  c.title = "Sink_k: share of (window, layer, head) with alpha_k > epsilon";
  c.x_label = "key position k";
  c.y_label = "Sink_k";
  c.integer_x = true;
  c.y_min = 0;
  c.y_max = 1;
  for (const auto& r : rows) {
    const size_t runs = r.model_values("sink_k", 1).size();
    if (runs == 0) continue;
    h += "<tr><td>" + esc(r.stat_label()) + fmt::format("</td><td>{}</td><td>", runs) +
         distinct(r.model_values("sink_k_window")) + "</td><td>" + distinct(r.model_values("sink_k_epsilon")) + "</td>";
    Series s{r.stat_label(), {}, true};
    for (int64_t k = 1; k <= positions; ++k) {
      const auto v = r.mean(-1, -1, "sink_k", k);
      h += "<td class=\"num\">" + fmt_stat(v) + "</td>";
      if (v) s.points.emplace_back(static_cast<double>(k), *v);
    }
    h += "</tr>\n";
    c.series.push_back(std::move(s));
  }
  write_text(o.out / "sink_k.svg", render_line_chart(c));
  return h + "</tbody>\n</table>\n" + figure("sink_k.svg", c.title);
}

// alpha_k per row beside its uniform baseline: one dashed line per window length T in use (the
// baseline is a function of T alone: mean over i >= k-1 of 1/(i+1)).
std::string alpha_k_chart(const std::vector<RowData>& rows, int64_t positions, const ReportOptions& o) {
  LineChart c;
  c.title = "alpha_k: mean weight on key k (dashed: uniform attention)";
  c.x_label = "key position k";
  c.y_label = "alpha_k";
  c.integer_x = true;
  c.y_min = 0;
  std::map<double, Series> uniform;  // window T -> its baseline
  for (const auto& r : rows) {
    Series s{r.stat_label(), {}, true};
    for (int64_t k = 1; k <= positions; ++k) {
      if (auto v = r.mean(-1, -1, "alpha_k", k)) s.points.emplace_back(static_cast<double>(k), *v);
    }
    if (!s.points.empty()) c.series.push_back(std::move(s));
    for (const RunStats* run : r.stats) {
      auto t = run->find({-1, -1, "sink_k_window", -1});
      if (t == run->end() || uniform.count(t->second)) continue;
      Series u{fmt::format("uniform, T={:g}", t->second)};
      u.dashed = true;
      for (int64_t k = 1; k <= positions; ++k) {
        auto v = run->find({-1, -1, "alpha_k_uniform", k});
        if (v != run->end()) u.points.emplace_back(static_cast<double>(k), v->second);
      }
      if (!u.points.empty()) uniform.emplace(t->second, std::move(u));
    }
  }
  for (auto& [t, u] : uniform) c.series.push_back(std::move(u));
  if (c.series.empty()) return "";
  write_text(o.out / "alpha_k.svg", render_line_chart(c));
  return figure("alpha_k.svg", c.title);
}

// The sink rate of Gu et al. by key position (docs/diagnostics.md, "Published metrics").
std::string sink_k_section(const std::vector<RowData>& rows, const ReportOptions& o) {
  std::string h = "<section id=\"sink-rate\">\n<h2>Sink rate by key position (Gu et al.)</h2>\n";
  const int64_t positions = sink_k_positions(rows);
  if (positions == 0) {
    return h + "<p class=\"note\">No Sink_k recorded: <code>attnbench attn-stats --db</code> of this "
               "version records it.</p>\n</section>\n";
  }
  h += sink_k_table_and_chart(rows, positions, o) + alpha_k_chart(rows, positions, o) + measurement_note(rows);
  h += "<p class=\"notes\">Sink_k (Gu et al., ICLR 2025) as a fraction: the share of (window, layer, "
       "head) whose alpha_k, the mean weight that the queries seeing key k give it, exceeds epsilon, "
       "on windows of T tokens; Sink_1 is \"the\" sink rate. Mean over the row's runs that have it "
       "(column runs). Definitions: docs/diagnostics.md, \"Published metrics\".</p>\n";
  return h + "</section>\n";
}

std::string render(const ReportPage& page) {
  return sink_k_section(page.rows, page.options);
}

ReportSection section() {
  ReportSection s;
  s.id = "sink-rate";
  s.nav = "sink rate by key";
  s.order = 50;
  s.render = render;
  return s;
}

const RegisterReportSection kRegistered(section());

}  // namespace

}  // namespace attnbench::results
