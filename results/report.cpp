#include "results/report.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "core/common/error.h"
#include "results/paired.h"
#include "results/query.h"
#include "results/schema.h"
#include "results/sqlite.h"
#include "results/svg.h"
#include "results/table.h"

namespace attnbench::results {

namespace {

// (layer, head, stat, idx) -> value of one run's attention statistics.
using StatKey = std::tuple<int64_t, int64_t, std::string, int64_t>;
using RunStats = std::map<StatKey, double>;

// One run's attention statistics; the names of those it recorded as a variant's learned ones
// (AttnStat::learned, read by `learned_sql`: attn_stats_learned_sql) are added to `learned`.
RunStats load_stats(Db& db, const std::string& run, const std::string& learned_sql,
                    std::set<std::string>& learned) {
  Stmt s = db.prepare("SELECT layer, head, stat, idx, value, " + learned_sql +
                      " FROM attn_stats WHERE run = ?");
  s.bind(1, run);
  RunStats out;
  while (s.step()) {
    if (s.integer(5)) learned.insert(s.text(2));
    if (s.is_null(4)) continue;  // a non-finite value is stored as NULL: not a number to average
    out[{s.integer(0), s.integer(1), s.text(2), s.integer(3)}] = s.real(4);
  }
  return out;
}

std::vector<std::pair<double, double>> load_curve(Db& db, const std::string& run, const std::string& key) {
  Stmt s = db.prepare("SELECT step, value FROM metrics WHERE run = ? AND key = ? AND value IS NOT NULL "
                      "ORDER BY step");
  s.bind(1, run).bind(2, key);
  std::vector<std::pair<double, double>> out;
  while (s.step()) out.emplace_back(static_cast<double>(s.integer(0)), s.real(1));
  return out;
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f.flush()) throw std::runtime_error("cannot write " + path.string());
}

std::string esc(const std::string& s) { return xml_escape(s); }

// One row of the results table with its runs' attention statistics.
struct RowData {
  std::string label;
  std::vector<const RunStats*> stats;  // runs of the row that have statistics
  std::set<std::string> learned;       // which of their statistics are learned, not measured

  // Mean over the row's runs that have the statistic.
  std::optional<double> mean(int64_t layer, int64_t head, const std::string& stat, int64_t idx = -1) const {
    double sum = 0;
    int n = 0;
    for (const RunStats* s : stats) {
      auto it = s->find({layer, head, stat, idx});
      if (it == s->end()) continue;
      sum += it->second;
      ++n;
    }
    if (n == 0) return std::nullopt;
    return sum / n;
  }
  // A model-level statistic (layer = head = -1) over the row's runs that have it: the mean, the
  // sample standard deviation (n - 1, needs n >= 2) and n; nullopt when no run has it.
  struct Spread {
    double mean = 0;
    std::optional<double> std;
    int n = 0;
  };
  std::optional<Spread> model_spread(const std::string& stat) const {
    const std::vector<double> v = model_values(stat);
    if (v.empty()) return std::nullopt;
    return Spread{mean_of(v), sample_std(v), static_cast<int>(v.size())};
  }
  // A model-level statistic (layer = head = -1) in each of the row's runs that has it.
  std::vector<double> model_values(const std::string& stat, int64_t idx = -1) const {
    std::vector<double> v;
    for (const RunStats* s : stats) {
      auto it = s->find({-1, -1, stat, idx});
      if (it != s->end()) v.push_back(it->second);
    }
    return v;
  }
  // One past the largest layer (head -1 rows) carrying `stat`.
  int64_t layers(const std::string& stat) const {
    int64_t n = 0;
    for (const RunStats* s : stats) {
      for (const auto& [k, v] : *s) {
        if (std::get<1>(k) == -1 && std::get<2>(k) == stat) n = std::max(n, std::get<0>(k) + 1);
      }
    }
    return n;
  }
  // Fixed-token (Mask@k) position recorded in the model summary, or -1.
  int64_t fixed_position() const {
    for (const RunStats* s : stats) {
      for (const auto& [k, v] : *s) {
        if (std::get<0>(k) == -1 && std::get<2>(k) == "fixed_token_mass") return std::get<3>(k);
      }
    }
    return -1;
  }
};

std::string row_label(const ResultTable& t, const Row& r) {
  if (t.row_keys.empty()) return t.sweep;
  std::vector<std::string> parts;
  for (const auto& v : r.keys) parts.push_back(row_value(v));
  return join(parts, " / ");
}

std::string results_table_html(const ResultTable& t) {
  std::string h = "<table>\n<thead><tr>";
  for (const auto& k : t.row_keys) h += "<th>" + esc(k) + "</th>";
  if (t.row_keys.empty()) h += "<th>sweep</th>";
  h += "<th>n</th>";
  for (const Column& c : t.columns) h += "<th class=\"num\">" + esc(column_label(c)) + "</th>";
  if (t.has_avg) h += "<th class=\"num\">Avg ↑</th>";
  h += "</tr></thead>\n<tbody>\n";
  const Column avg_column{"", "", false, true};
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

std::string fmt_stat(const std::optional<double>& v, int decimals = 3) {
  if (!v) return kMissing;
  std::string s = fmt::format("{:.{}f}", *v, decimals);
  // A value that rounds to zero prints as 0, whatever its sign (-0.000 reads as a negative mass).
  if (s.find_first_not_of("-0.") == std::string::npos && s[0] == '-') s.erase(0, 1);
  return s;
}

struct SummaryColumn {
  const char* stat;
  const char* label;
  const char* doc;
};
constexpr SummaryColumn kSummary[] = {
    {"sink_mass", "sink mass", "mean over query rows of the weight on the first token"},
    {"sink_rate", "sink rate", "fraction of heads whose sink mass exceeds the threshold"},
    {"sparsity", "sparsity", "exact zeros among causal entries"},
    {"entropy", "entropy (nats)", "of the row-normalised weights, rows with mass"},
    {"row_mass_mean", "row mass mean", "sum_j a_ij over rows"},
    {"row_mass_min", "row mass min", ""},
    {"row_mass_max", "row mass max", ""},
    {"zero_rows", "zero rows", "fraction of rows whose weights are all 0"},
};

std::string diagnostics_html(const std::vector<RowData>& rows) {
  bool any_fixed = false;
  for (const auto& r : rows) any_fixed = any_fixed || r.fixed_position() >= 0;
  std::string h = "<table>\n<thead><tr><th>row</th><th>runs</th>";
  for (const auto& c : kSummary) h += fmt::format("<th class=\"num\" title=\"{}\">{}</th>", esc(c.doc), esc(c.label));
  if (any_fixed) h += "<th class=\"num\">mass at k (Mask@k)</th>";
  h += "</tr></thead>\n<tbody>\n";
  for (const auto& r : rows) {
    h += "<tr><td>" + esc(r.label) + "</td>" + fmt::format("<td>{}</td>", r.stats.size());
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

std::string figure(const std::string& file, const std::string& caption) {
  return fmt::format("<figure><img src=\"{}\" alt=\"{}\"><figcaption>{}</figcaption></figure>\n",
                     esc(file), esc(caption), esc(caption));
}

constexpr const char* kStyle = R"(body{font-family:sans-serif;margin:24px;max-width:1200px;color:#222}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:13px}th,td{border:1px solid #ddd;padding:3px 8px}
th{background:#f4f4f4}td.num,th.num{text-align:right}td.missing{color:#999}
figure{display:inline-block;margin:8px;vertical-align:top}figcaption{font-size:12px;color:#555}
.notes{font-size:12px;color:#555}.note{color:#8a5a00}p.meta{color:#666;font-size:12px})";

// The table's rows with the attention statistics of their finished runs; the statistics are
// kept in `stats`, which the rows point into.
std::vector<RowData> row_data(Db& db, const ResultTable& table,
                              std::map<std::string, RunStats>& stats) {
  const std::string learned_sql = attn_stats_learned_sql(db);  // the schema, read once
  std::vector<RowData> rows;
  for (const Row& r : table.rows) {
    RowData d;
    d.label = row_label(table, r);
    for (const auto& id : r.runs) {
      RunStats s = load_stats(db, id, learned_sql, d.learned);
      if (s.empty()) continue;
      d.stats.push_back(&(stats[id] = std::move(s)));
    }
    rows.push_back(std::move(d));
  }
  return rows;
}

// The page up to its sections: title, style, when and from what it was made, the navigation.
std::string page_head(Db& db, const ReportOptions& o, const std::vector<SweepMember>& members) {
  std::time_t now = std::time(nullptr);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
                  esc("attnbench report: " + o.sweep) + "</title>\n<style>" + kStyle +
                  "</style>\n</head>\n<body>\n";
  h += "<h1>" + esc("attnbench report: sweep " + o.sweep) + "</h1>\n";
  h += fmt::format("<p class=\"meta\">{} runs ({} finished) from {}; generated {}.</p>\n", members.size(),
                   std::count_if(members.begin(), members.end(),
                                 [](const SweepMember& m) { return m.status == "finished"; }),
                   esc(db.path().string()), when);
  h += "<nav><a href=\"#results\">results</a> · <a href=\"#side-by-side\">side by side</a> · "
       "<a href=\"#paired\">paired differences</a> · "
       "<a href=\"#diagnostics\">attention summary</a> · <a href=\"#sink-rate\">sink rate by key</a> · "
       "<a href=\"#loss-curves\">loss curves</a> · <a href=\"#task-bars\">per-task bars</a> · "
       "<a href=\"#attention\">per layer</a> · <a href=\"#hidden-states\">hidden states</a> · "
       "<a href=\"#learned\">learned parameters</a> · <a href=\"#heatmaps\">heatmaps</a></nav>\n";
  return h;
}

// The paper-style table (results/query.h build_table).
std::string results_section(const ResultTable& table) {
  std::string h = "<section id=\"results\">\n<h2>Results</h2>\n";
  h += table.rows.empty() ? "<p class=\"note\">No runs in this sweep.</p>\n" : results_table_html(table);
  return h + "</section>\n";
}

// Model-level attention statistics.
std::string diagnostics_section(const std::vector<RowData>& rows, bool any_stats) {
  std::string h = "<section id=\"diagnostics\">\n<h2>Attention summary (mean over layers and heads)</h2>\n";
  if (any_stats) {
    h += diagnostics_html(rows);
    h += "<p class=\"notes\">Definitions: docs/diagnostics.md. Values are means over the row's runs "
         "that have statistics (column runs).</p>\n";
  } else {
    h += "<p class=\"note\">No attention statistics recorded for this sweep's finished runs: run "
         "<code>attnbench attn-stats --checkpoint runs/RUN --db DB</code> for each.</p>\n";
  }
  return h + "</section>\n";
}

// The statistics the side-by-side table shows (kSummary's entries of these names), each only when
// some row has it: the table answers "how much sink, how many sinking heads, how sparse".
constexpr const char* kSideBySide[] = {"sink_mass", "sink_rate", "sparsity"};
const std::string kMissingCell = std::string("<td class=\"num missing\">") + kMissing + "</td>";

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
    if (c.in_average) h += th(column_label(c), c.task);
  }
  h += "</tr></thead>\n<tbody>\n";
  const Column avg_column{"", "", false, true};
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const Row& r = t.rows[i];
    h += "<tr><td>" + esc(rows[i].label) + fmt::format("</td><td>{}</td>", r.n);
    for (const SummaryColumn* c : stats) h += spread_cell(rows[i].model_spread(c->stat), r.n);
    if (t.has_avg) {
      h += !r.avg ? kMissingCell
                  : "<td class=\"num\">" + esc(format_mean_std(avg_column, r.avg->mean, r.avg->std, " ± ")) +
                        (r.avg->complete() ? "" : kIncompleteMarker) + "</td>";
    }
    for (size_t c = 0; c < t.columns.size(); ++c) {
      if (!t.columns[c].in_average) continue;
      const Cell& cell = r.cells[c];
      h += cell.n == 0 ? kMissingCell
                       : "<td class=\"num\">" + esc(format_value(t.columns[c], cell.mean)) +
                             (cell.n < r.n ? fmt::format(" (n={})", cell.n) : "") + "</td>";
    }
    h += "</tr>\n";
  }
  return h + "</tbody>\n</table>\n";
}

// Sink mass against Avg accuracy, one labelled point per row that has both; "" when none has.
std::string sink_vs_accuracy(const ResultTable& t, const std::vector<RowData>& rows,
                             const ReportOptions& o) {
  ScatterChart c;
  c.title = "sink mass vs average accuracy (one point per row)";
  c.x_label = "sink mass (model mean)";
  c.y_label = "Avg accuracy (%)";
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const auto sink = rows[i].model_spread("sink_mass");
    const auto& avg = t.rows[i].avg;
    if (!sink || !avg) continue;
    const std::string label = rows[i].label + (avg->complete() ? "" : kIncompleteMarker);
    c.points.push_back({label, sink->mean, 100 * avg->mean});
  }
  if (c.points.empty()) return "";
  write_text(o.out / "sink_vs_accuracy.svg", render_scatter_chart(c));
  return figure("sink_vs_accuracy.svg", c.title);
}

// Every row side by side: where its attention goes next to what it scores (does curing the
// attention sink cost accuracy?).
std::string side_by_side_section(const ResultTable& table, const std::vector<RowData>& rows,
                                 bool any_stats, const ReportOptions& o) {
  std::string h = "<section id=\"side-by-side\">\n<h2>Variants side by side: attention sink and "
                  "accuracy</h2>\n";
  if (!any_stats && !table.has_avg) {
    return h + "<p class=\"note\">Nothing to compare yet: no attention statistics or accuracies "
               "recorded for this sweep's finished runs.</p>\n</section>\n";
  }
  h += side_by_side_html(table, rows);
  h += "<p class=\"notes\">One row per row of the results table (its runs averaged over seeds). "
       "Statistics: model-level means (docs/diagnostics.md), mean ± sample std over the row's runs "
       "that have them, (n=k) when fewer than its seeds do. Accuracies in % (" +
       esc(table.metric_choice) + " metric choice); Avg as in the results table, " +
       kIncompleteMarker + " = over the tasks present only; per-task ± and stderr markers are in "
       "the results table.</p>\n";
  h += sink_vs_accuracy(table, rows, o);
  return h + "</section>\n";
}

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

// Per-task accuracy bars.
std::string task_bars_section(const ResultTable& table, const ReportOptions& o) {
  std::string h = "<section id=\"task-bars\">\n<h2>Per-task accuracy</h2>\n";
  BarChart c;
  c.title = "accuracy per task (%), whiskers: standard error of the mean";
  c.y_label = "accuracy (%)";
  c.y_max = 100;
  for (const auto& r : table.rows) c.series.push_back(row_label(table, r));
  for (size_t col = 0; col < table.columns.size(); ++col) {
    if (!table.columns[col].in_average) continue;  // perplexities are on another scale
    c.groups.push_back(table.columns[col].task);
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
                                     " metric choice); perplexities are in the table only");
  }
  return h + "</section>\n";
}

// One per-layer chart: a statistic's layer rows (head = -1, the mean over heads where it is per
// head), one line per table row. Written to `<stat>_per_layer.svg`; "" when no row has it.
struct LayerPlot {
  std::string stat;
  std::string title;
  int64_t idx = -1;
  std::optional<double> y_min, y_max;
  bool log_y = false;
};

std::string per_layer_chart(const std::vector<RowData>& rows, const LayerPlot& p, const ReportOptions& o) {
  LineChart c;
  c.title = p.title;
  c.x_label = "layer";
  c.y_label = p.stat;
  c.y_min = p.y_min;
  c.y_max = p.y_max;
  c.log_y = p.log_y;
  for (const auto& r : rows) {
    Series s{r.label, {}, true};
    for (int64_t l = 0; l < r.layers(p.stat); ++l) {
      if (auto v = r.mean(l, -1, p.stat, p.idx)) s.points.emplace_back(static_cast<double>(l), *v);
    }
    if (!s.points.empty()) c.series.push_back(std::move(s));
  }
  if (c.series.empty()) return "";
  const std::string file = p.stat + "_per_layer.svg";
  write_text(o.out / file, render_line_chart(c));
  return figure(file, c.title);
}

// The attention statistics per layer: where the mass goes and how sparse the weights are, with the
// Lazy authors' non-zero ratio beside exact-zero sparsity (docs/diagnostics.md, the two differ).
std::string per_layer_section(const std::vector<RowData>& rows, bool any_stats,
                              const ReportOptions& o) {
  std::string h = "<section id=\"attention\">\n<h2>Sink mass, sparsity and non-zero ratio per layer</h2>\n";
  if (!any_stats) return h + "<p class=\"note\">No attention statistics recorded.</p>\n</section>\n";
  const LayerPlot plots[] = {
      {"sink_mass", "sink mass per layer (mean over heads)", -1, 0.0, 1.0, false},
      {"sparsity", "sparsity per layer (exact zeros among causal entries, mean over heads)", -1, 0.0, 1.0, false},
      {"nonzero_ratio", "non-zero ratio per layer ((a > 1e-6) over all T² entries, mean over heads)", -1, 0.0,
       1.0, false},
      {"sink_rate", "sink rate per layer (fraction of heads)", -1, 0.0, 1.0, false},
      {"entropy", "entropy per layer (nats, mean over heads)", -1, std::nullopt, std::nullopt, false}};
  for (const auto& p : plots) h += per_layer_chart(rows, p, o);
  return h + "</section>\n";
}

// The residual stream after each block (docs/diagnostics.md, "Published metrics", hidden states):
// massive activations of Sun et al., the largest |h|, kurtosis, and the collapse measures.
std::string hidden_states_section(const std::vector<RowData>& rows, const ReportOptions& o) {
  std::string h = "<section id=\"hidden-states\">\n<h2>Hidden states per layer</h2>\n";
  const LayerPlot plots[] = {
      {"massive_activations", "massive activations per layer (|h| > 100 and > 1000x the median, per window)", -1,
       0.0, std::nullopt, false},
      {"top_activation", "largest |h| per layer (mean over windows)", 1, std::nullopt, std::nullopt, true},
      {"kurtosis", "activation kurtosis per layer (Pearson, 3 = Gaussian)", -1, std::nullopt, std::nullopt, false},
      {"mean_cosine", "mean pairwise cosine of token states per layer (1 = collapsed)", -1, std::nullopt, 1.0, false},
      {"effective_rank", "effective rank of the states per layer (1 = collapsed)", -1, 0.0, std::nullopt, false}};
  std::string figures;
  for (const auto& p : plots) figures += per_layer_chart(rows, p, o);
  if (figures.empty()) {
    return h + "<p class=\"note\">No hidden-state statistics recorded (<code>attnbench attn-stats "
               "--db</code> records them).</p>\n</section>\n";
  }
  return h + figures + "<p class=\"notes\">The residual stream after each block, per window and "
                       "averaged over windows, then over the row's runs (docs/diagnostics.md, "
                       "\"Published metrics\").</p>\n</section>\n";
}

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
  c.y_min = 0;
  c.y_max = 1;
  for (const auto& r : rows) {
    const size_t runs = r.model_values("sink_k", 1).size();
    if (runs == 0) continue;
    h += "<tr><td>" + esc(r.label) + fmt::format("</td><td>{}</td><td>", runs) +
         distinct(r.model_values("sink_k_window")) + "</td><td>" + distinct(r.model_values("sink_k_epsilon")) + "</td>";
    Series s{r.label, {}, true};
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
  c.y_min = 0;
  std::map<double, Series> uniform;  // window T -> its baseline
  for (const auto& r : rows) {
    Series s{r.label, {}, true};
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
  h += sink_k_table_and_chart(rows, positions, o) + alpha_k_chart(rows, positions, o);
  h += "<p class=\"notes\">Sink_k (Gu et al., ICLR 2025) as a fraction: the share of (window, layer, "
       "head) whose alpha_k, the mean weight that the queries seeing key k give it, exceeds epsilon, "
       "on windows of T tokens; Sink_1 is \"the\" sink rate. Mean over the row's runs that have it "
       "(column runs). Definitions: docs/diagnostics.md, \"Published metrics\".</p>\n";
  return h + "</section>\n";
}

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
       "--baseline</code>, else the first row with finished runs.</li>\n";
  return h + "</ul>\n</section>\n";
}

// Attention heatmaps (PNG files computed by the caller).
std::string heatmaps_section(const ReportOptions& o) {
  std::string h = "<section id=\"heatmaps\">\n<h2>Attention heatmaps</h2>\n";
  if (!o.heatmap_text.empty()) h += "<p class=\"meta\">Text: " + esc(o.heatmap_text) + ".</p>\n";
  h += "<p class=\"meta\">Rows are queries i (top to bottom), columns keys j; blue = weight "
       "(sqrt scale to the map's maximum), white = exactly 0, grey = future keys.</p>\n";
  if (o.heatmaps.empty()) h += "<p class=\"note\">No heatmaps: no finished runs.</p>\n";
  for (const auto& f : o.heatmaps) {
    const std::string caption = fmt::format("{} ({}), layer {}, head {}", f.label, f.run_id, f.layer, f.head);
    if (f.file.empty()) {
      h += "<p class=\"note\">" + esc(caption + ": " + f.note) + "</p>\n";
    } else {
      h += fmt::format("<figure><img src=\"{}\" alt=\"{}\" width=\"384\"><figcaption>{}</figcaption></figure>\n",
                       esc(f.file), esc(caption), esc(caption + (f.note.empty() ? "" : "; " + f.note)));
    }
  }
  return h + "</section>\n";
}

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
  for (const auto& stat : profiles) figures += learned_profiles(rows, stat, o);
  h += figures.empty() ? "<p class=\"note\">No learned parameters recorded (no row's variant "
                         "exposes learned statistics).</p>\n"
                       : figures;
  h += "</section>\n";
  return h;
}

}  // namespace

std::vector<SweepMember> sweep_members(Db& db, const std::string& sweep) {
  {
    Stmt s = db.prepare("SELECT name FROM sweeps ORDER BY name");
    std::vector<std::string> names;
    while (s.step()) names.push_back(s.text(0));
    if (std::find(names.begin(), names.end(), sweep) == names.end()) {
      throw UsageError("no sweep '" + sweep + "' in " + db.path().string() + did_you_mean(sweep, names) +
                       (names.empty() ? "; it holds no sweeps" : "; sweeps: " + join(names)));
    }
  }
  Stmt s = db.prepare("SELECT r.id, sr.cell, r.status FROM sweep_runs sr JOIN runs r ON r.id = sr.run "
                      "WHERE sr.sweep = ? ORDER BY r.created, r.id");
  s.bind(1, sweep);
  std::vector<SweepMember> out;
  while (s.step()) out.push_back({s.text(0), s.text(1), s.text(2)});
  return out;
}

Comparison paired_comparison(Db& db, const std::string& sweep, const std::string& baseline) {
  CompareRequest request;
  request.table.sweep = sweep;
  request.baseline = baseline;
  if (baseline.empty()) {
    // The sweep's first row is its first cell, by convention the reference (the shipped sweeps
    // list softmax first); a row with no finished run has nothing to compare against.
    std::vector<const Row*> finished;
    const ResultTable table = build_table(db, request.table);
    for (const Row& r : table.rows) {
      if (r.n > 0) finished.push_back(&r);
    }
    if (finished.size() < 2) {
      Comparison none;
      none.notes.push_back("fewer than two rows with finished runs: nothing to compare");
      return none;
    }
    request.baseline = finished[0]->runs[0];  // a run id selects its row
  }
  return compare_to_baseline(db, request);
}

std::filesystem::path write_report(Db& db, const ReportOptions& o) {
  const std::vector<SweepMember> members = sweep_members(db, o.sweep);
  // Before anything is written: a bad --baseline is a usage error, not half a page.
  const Comparison paired = o.paired ? *o.paired : paired_comparison(db, o.sweep, o.baseline);
  TableRequest request;
  request.sweep = o.sweep;
  const ResultTable table = build_table(db, request);
  std::filesystem::create_directories(o.out);
  std::map<std::string, RunStats> stats;
  const std::vector<RowData> rows = row_data(db, table, stats);
  const bool any_stats = std::any_of(rows.begin(), rows.end(), [](const RowData& r) { return !r.stats.empty(); });

  // One function per section, in the order of the page (report.h).
  std::string h = page_head(db, o, members);
  h += results_section(table);
  h += side_by_side_section(table, rows, any_stats, o);
  h += paired_section(paired);
  h += diagnostics_section(rows, any_stats);
  h += sink_k_section(rows, o);
  h += loss_curves_section(db, table, rows, members, o);
  h += task_bars_section(table, o);
  h += per_layer_section(rows, any_stats, o);
  h += hidden_states_section(rows, o);
  h += learned_section(rows, o);
  h += heatmaps_section(o);
  h += "</body>\n</html>\n";

  const std::filesystem::path page = o.out / "index.html";
  write_text(page, h);
  return page;
}

}  // namespace attnbench::results
