// The report's "learned" section: the statistics a variant records as learned (AttnStat::learned):
// per-head numbers per layer, and profiles such as the distance bias b[h, r].
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "results/report/page.h"
#include "results/svg.h"

namespace attnbench::results {

namespace {

// The learned statistics the rows hold: per-head numbers (index -1) and profiles (index >= 0).
void learned_stat_names(const std::vector<RowData>& rows, std::set<std::string>& per_head,
                        std::set<std::string>& profiles) {
  for (const auto& r : rows) {
    for (const RunStats* s : r.stats) {
      for (const auto& [k, v] : *s) {
        if (r.learned.count(std::get<2>(k))) {
          (std::get<3>(k) < 0 ? per_head : profiles).insert(std::get<2>(k));
        }
      }
    }
  }
}

// One chart of a per-head statistic: its per-layer mean over heads, one line per row.
std::string learned_per_layer(const std::vector<RowData>& rows, const std::string& stat,
                              const ReportOptions& o) {
  return per_layer_chart(rows, {stat, "learned " + stat + " per layer (mean over heads)", -1, std::nullopt,
                               std::nullopt, false}, o);
}

// The charts of a profile statistic: per row and layer, one line per head over the index r.
std::string learned_profiles(const std::vector<RowData>& rows, const std::string& stat,
                             const ReportOptions& o) {
  std::string h;
  for (size_t ri = 0; ri < rows.size(); ++ri) {
    const RowData& r = rows[ri];
    std::map<int64_t, std::set<int64_t>> heads;  // layers and heads that carry the profile
    int64_t length = 0;
    for (const RunStats* s : r.stats) {
      for (const auto& [k, v] : *s) {
        if (std::get<2>(k) != stat || std::get<1>(k) < 0 || std::get<3>(k) < 0) continue;
        heads[std::get<0>(k)].insert(std::get<1>(k));
        length = std::max(length, std::get<3>(k) + 1);
      }
    }
    for (const auto& [layer, hs] : heads) {
      LineChart b;
      b.title = fmt::format("learned {}[h, r], {}, layer {}", stat, r.label, layer);
      b.x_label = "r";
      b.integer_x = true;
      b.y_label = stat + "[h, r]";
      for (int64_t head : hs) {
        Series s{fmt::format("head {}", head), {}, false};
        for (int64_t idx = 0; idx < length; ++idx) {
          if (auto v = r.mean(layer, head, stat, idx)) s.points.emplace_back(double(idx), *v);
        }
        b.series.push_back(std::move(s));
      }
      const std::string file = fmt::format("{}_row{}_layer{}.svg", stat, ri, layer);
      write_text(o.out / file, render_line_chart(b));
      h += figure(file, b.title);
    }
  }
  return h;
}

// Learned parameters: whatever learned statistics the store holds.
std::string learned_section(const std::vector<RowData>& rows, const ReportOptions& o) {
  std::string h = "<section id=\"learned\">\n<h2>Learned parameters</h2>\n";
  std::set<std::string> per_head, profiles;
  learned_stat_names(rows, per_head, profiles);
  std::string figures;
  for (const auto& stat : per_head) figures += learned_per_layer(rows, stat, o);
  // The profiles are one chart per row and layer: collapsed, so that the page stays short.
  for (const auto& stat : profiles) {
    const std::string charts = learned_profiles(rows, stat, o);
    if (charts.empty()) continue;
    figures += "<details><summary>learned " + esc(stat) + " profiles: one chart per row and layer" +
               "</summary>\n" + charts + "</details>\n";
  }
  h += figures.empty() ? "<p class=\"note\">No learned parameters recorded (no row's variant "
                         "exposes learned statistics).</p>\n"
                       : figures;
  h += "</section>\n";
  return h;
}

std::string render(const ReportPage& page) {
  return learned_section(page.rows, page.options);
}

ReportSection section() {
  ReportSection s;
  s.id = "learned";
  s.nav = "learned parameters";
  s.order = 100;
  s.render = render;
  return s;
}

const RegisterReportSection kRegistered(section());

}  // namespace

}  // namespace attnbench::results
