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

// One chart of the section: a logged curve, optionally smoothed.
struct LossCurve {
  const char *file, *title, *key, *alias;
  double smoothing = 0;  // the EMA weight of each earlier point; 0 = the raw values
};

// TensorBoard's smoothing: an exponential moving average whose start-up bias is divided out
// (s_t = w s_{t-1} + (1 - w) x_t, shown as s_t / (1 - w^t)), so the first points are not pulled
// towards 0. A step's training loss is one batch's, noisy at small batches; the trend is this.
Curve smoothed(const Curve& c, double w) {
  if (w <= 0) return c;
  Curve out;
  double ema = 0, weight = 1;
  for (const auto& [step, v] : c) {
    ema = w * ema + (1 - w) * v;
    weight *= w;
    out.emplace_back(step, ema / (1 - weight));
  }
  return out;
}

// The curve's figure: per row of the table, one line (a single finished run) or the mean over its
// seeds with a min..max band; runs outside the table (unfinished) alone, with their status. ""
// when no run logged it.
std::string loss_chart(const ReportPage& page, const LossCurve& curve) {
  const auto load = [&](const std::string& run) {
    Curve points = load_curve(page.db, run, curve.key);
    return smoothed(points.empty() ? load_curve(page.db, run, curve.alias) : points, curve.smoothing);
  };
  LineChart c;
  c.title = std::string(curve.title) + " per row";
  c.x_label = "step";
  c.y_label = curve.key;
  c.log_y = true;
  std::set<std::string> in_rows;
  for (size_t i = 0; i < page.table.rows.size(); ++i) {
    std::vector<Curve> seeds;
    for (const std::string& id : page.table.rows[i].runs) {
      in_rows.insert(id);
      if (Curve points = load(id); !points.empty()) seeds.push_back(std::move(points));
    }
    const std::string& label = page.rows[i].label;
    if (seeds.size() == 1) c.series.push_back({label, std::move(seeds[0]), false});
    if (seeds.size() >= 2) c.series.push_back(seed_band(fmt::format("{} (mean of {} seeds)", label, seeds.size()), seeds));
  }
  for (const auto& m : page.members) {
    if (in_rows.count(m.id)) continue;
    Series s{(m.cell.empty() ? m.id : m.cell) + " (" + m.status + ")", load(m.id), false};
    if (!s.points.empty()) c.series.push_back(std::move(s));
  }
  if (c.series.empty()) return "";
  const std::string file = std::string(curve.file) + ".svg";
  write_text(page.options.out / file, render_line_chart(c));
  return figure(file, c.title);
}

// Training loss raw and smoothed, and validation loss. The trainer logs train/loss and val/loss
// (docs/training.md); loss and val_loss, the names the first design gave the same curves, are
// read when the former are absent.
std::string render(const ReportPage& page) {
  std::string h = "<section id=\"loss-curves\">\n<h2>Loss curves</h2>\n";
  const LossCurve curves[] = {
      {"loss", "training loss", "train/loss", "loss", 0},
      {"loss_smoothed", "training loss, smoothed (EMA 0.9, debiased, as TensorBoard)", "train/loss", "loss", 0.9},
      {"val_loss", "validation loss", "val/loss", "val_loss", 0}};
  bool drawn = false;
  for (const LossCurve& curve : curves) {
    const std::string fig = loss_chart(page, curve);
    if (fig.empty() && curve.smoothing == 0) h += fmt::format("<p class=\"note\">No {} recorded.</p>\n", curve.title);
    h += fig;
    drawn = drawn || !fig.empty();
  }
  if (drawn) h += "<p class=\"notes\">A row with several finished seeds: the mean over its seeds at the steps "
       "every seed logged, the shaded band from the lowest to the highest seed (min..max, not ± "
       "std: with 2 or 3 seeds a std says little). A row with one finished run: that run. Runs not "
       "finished (running, failed, diverged) are drawn alone, labelled with their cell and status. "
       "A step's training loss is the mean over that step's batch, noisy when the batch is small; "
       "the smoothed chart shows its trend (each point the exponential average of the steps up to "
       "it, weight 0.9 on the past).</p>\n";
  return h + "</section>\n";
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
