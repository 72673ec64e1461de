// The report's "loss-curves" section: training and validation loss per table row, a row's seeds as
// their mean with a min..max band, unfinished runs alone.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "results/report/page.h"
#include "results/svg.h"

namespace attnbench::results {

namespace {

using Curve = std::vector<std::pair<double, double>>;

// A row's curves over its seeds as one series: the mean at each step that every seed logged (a
// step some seed lacks would average different seeds along the line), shaded min..max over them.
Series seed_band(const std::string& name, const std::vector<Curve>& curves) {
  std::map<double, std::vector<double>> at;
  for (const Curve& c : curves) {
    for (const auto& [step, v] : c) at[step].push_back(v);
  }
  Series s{name, {}, false};
  for (const auto& [step, v] : at) {
    if (v.size() != curves.size()) continue;
    double sum = 0;
    for (double x : v) sum += x;
    s.points.emplace_back(step, sum / static_cast<double>(v.size()));
    s.band.emplace_back(*std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()));
  }
  return s;
}

// Training and validation loss: per row of the table, one line (a single finished run) or the
// mean over its seeds with a min..max band; runs outside the table (unfinished) alone, with their
// status.
std::string loss_curves_section(Db& db, const ResultTable& table, const std::vector<RowData>& rows,
                                const std::vector<SweepMember>& members, const ReportOptions& o) {
  std::string h = "<section id=\"loss-curves\">\n<h2>Loss curves</h2>\n";
  // The trainer logs train/loss and val/loss (docs/training.md); loss and val_loss, the names the
  // first design gave the same curves, are read when the former are absent.
  const struct {
    const char *file, *title, *key, *alias;
  } curves[] = {{"loss", "training loss", "train/loss", "loss"},
                {"val_loss", "validation loss", "val/loss", "val_loss"}};
  bool drawn = false;
  for (const auto& curve : curves) {
    const auto load = [&](const std::string& run) {
      Curve points = load_curve(db, run, curve.key);
      return points.empty() ? load_curve(db, run, curve.alias) : points;
    };
    LineChart c;
    c.title = std::string(curve.title) + " per row";
    c.x_label = "step";
    c.y_label = curve.key;
    c.log_y = true;
    std::set<std::string> in_rows;
    for (size_t i = 0; i < table.rows.size(); ++i) {
      std::vector<Curve> seeds;
      for (const std::string& id : table.rows[i].runs) {
        in_rows.insert(id);
        if (Curve points = load(id); !points.empty()) seeds.push_back(std::move(points));
      }
      if (seeds.size() == 1) c.series.push_back({rows[i].label, std::move(seeds[0]), false});
      if (seeds.size() >= 2) {
        c.series.push_back(seed_band(fmt::format("{} (mean of {} seeds)", rows[i].label, seeds.size()), seeds));
      }
    }
    for (const auto& m : members) {
      if (in_rows.count(m.id)) continue;
      Series s{(m.cell.empty() ? m.id : m.cell) + " (" + m.status + ")", load(m.id), false};
      if (!s.points.empty()) c.series.push_back(std::move(s));
    }
    if (c.series.empty()) {
      h += fmt::format("<p class=\"note\">No {} recorded.</p>\n", curve.title);
      continue;
    }
    const std::string file = std::string(curve.file) + ".svg";
    write_text(o.out / file, render_line_chart(c));
    h += figure(file, c.title);
    drawn = true;
  }
  if (drawn) h += "<p class=\"notes\">A row with several finished seeds: the mean over its seeds at the steps "
       "every seed logged, the shaded band from the lowest to the highest seed (min..max, not ± "
       "std: with 2 or 3 seeds a std says little). A row with one finished run: that run. Runs not "
       "finished (running, failed, diverged) are drawn alone, labelled with their cell and status.</p>\n";
  return h + "</section>\n";
}

std::string render(const ReportPage& page) {
  return loss_curves_section(page.db, page.table, page.rows, page.members, page.options);
}

ReportSection section() {
  ReportSection s;
  s.id = "loss-curves";
  s.nav = "loss curves";
  s.order = 60;
  s.render = render;
  return s;
}

const RegisterReportSection kRegistered(section());

}  // namespace

}  // namespace attnbench::results
