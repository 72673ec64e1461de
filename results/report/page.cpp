// The shared parts of the report (results/report/page.h).
#include "results/report/page.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "core/common/registry.h"
#include "results/schema.h"
#include "results/sqlite.h"
#include "results/store.h"
#include "results/svg.h"
#include "results/table.h"

namespace attnbench::results {

namespace {

Registry<ReportSection>& registry() {
  static Registry<ReportSection> sections("report section");  // function-local: safe from init order
  return sections;
}

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

// How `run` measured its statistics (attn_measurements, schema version 4).
std::string measurement_of(Db& db, const std::string& run, bool recorded) {
  const std::optional<AttnMeasurement> m = recorded ? read_attn_measurement(db, run) : std::nullopt;
  return m ? m->describe() : kUnrecordedMeasurement;
}

// Marks the rows whose measurements are not the page's most common one (by runs).
void mark_measured_otherwise(std::vector<RowData>& rows) {
  std::map<std::set<std::string>, size_t> runs_by_measurement;
  for (const RowData& r : rows) {
    if (!r.stats.empty()) runs_by_measurement[r.measured] += r.stats.size();
  }
  if (runs_by_measurement.size() < 2) return;
  const auto most = std::max_element(runs_by_measurement.begin(), runs_by_measurement.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  for (RowData& r : rows) r.measured_otherwise = !r.stats.empty() && r.measured != most->first;
}

}  // namespace

RegisterReportSection::RegisterReportSection(ReportSection section) {
  for (const auto& [id, other] : registry().items()) {
    if (other.order == section.order) {
      detail::registration_error_list().push_back(fmt::format(
          "report section '{}' registered at position {}, which '{}' holds", section.id, section.order, id));
    }
  }
  registry().add(section.id, section);
}

std::vector<const ReportSection*> report_sections() {
  std::vector<const ReportSection*> out;
  for (const auto& [id, s] : registry().items()) out.push_back(&s);
  std::sort(out.begin(), out.end(), [](const ReportSection* a, const ReportSection* b) { return a->order < b->order; });
  return out;
}

std::vector<RowData> row_data(Db& db, const ResultTable& table,
                              std::map<std::string, RunStats>& stats) {
  const std::string learned_sql = attn_stats_learned_sql(db);  // the schema, read once
  const bool recorded = schema_version(db) >= 4;
  std::vector<RowData> rows;
  for (const Row& r : table.rows) {
    RowData d;
    d.label = row_label(table, r);
    for (const auto& id : r.runs) {
      RunStats s = load_stats(db, id, learned_sql, d.learned);
      if (s.empty()) continue;
      d.stats.push_back(&(stats[id] = std::move(s)));
      d.measured.insert(measurement_of(db, id, recorded));
    }
    rows.push_back(std::move(d));
  }
  mark_measured_otherwise(rows);
  return rows;
}

std::string measurement_note(const std::vector<RowData>& rows) {
  std::set<std::string> all;
  std::vector<std::string> otherwise;
  for (const RowData& r : rows) {
    all.insert(r.measured.begin(), r.measured.end());
    if (r.measured_otherwise) otherwise.push_back(r.label + ": " + join({r.measured.begin(), r.measured.end()}, "; "));
  }
  if (all.empty()) return "";
  if (otherwise.empty()) {
    return "<p class=\"notes\">Attention statistics measured on " + esc(join({all.begin(), all.end()}, "; ")) +
           ".</p>\n";
  }
  return "<p class=\"note\">\u2021 measured otherwise than the other rows, so not comparable with them "
         "(sink mass and effective rank depend on the window length and the text): " +
         esc(join(otherwise, "; ")) + ".</p>\n";
}

std::optional<double> chance_level(Db& db, const ResultTable& table, const std::string& task) {
  for (const Row& r : table.rows) {
    for (const std::string& run : r.runs) {
      Stmt s = db.prepare("SELECT count(*) FROM samples WHERE run = ? AND task = ? GROUP BY doc");
      s.bind_all(run, task);
      double sum = 0;
      int64_t docs = 0;
      bool single = false;
      while (s.step()) {
        single = single || s.integer(0) < 2;
        sum += 1.0 / static_cast<double>(s.integer(0));
        ++docs;
      }
      if (docs > 0) return single ? std::nullopt : std::optional<double>(sum / static_cast<double>(docs));
    }
  }
  return std::nullopt;
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

std::string row_label(const ResultTable& t, const Row& r) {
  if (t.row_keys.empty()) return t.sweep.empty() ? "the runs given" : t.sweep;
  std::vector<std::string> parts;
  for (const auto& v : r.keys) parts.push_back(row_value(v));
  return join(parts, " / ");
}

std::string fmt_stat(const std::optional<double>& v, int decimals) {
  if (!v) return kMissing;
  std::string s = fmt::format("{:.{}f}", *v, decimals);
  // A value that rounds to zero prints as 0, whatever its sign (-0.000 reads as a negative mass).
  if (s.find_first_not_of("-0.") == std::string::npos && s[0] == '-') s.erase(0, 1);
  return s;
}

std::string figure(const std::string& file, const std::string& caption) {
  return fmt::format("<figure><img src=\"{}\" alt=\"{}\"><figcaption>{}</figcaption></figure>\n",
                     esc(file), esc(caption), esc(caption));
}

const std::string kMissingCell = std::string("<td class=\"num missing\">") + kMissing + "</td>";

const SummaryColumn kSummary[9] = {
    {"sink_mass", "sink mass", "mean over query rows of the weight on the first token"},
    {"sink_rate", "sink rate", "fraction of heads whose sink mass exceeds the threshold"},
    {"sparsity", "sparsity", "exact zeros among causal entries"},
    {"nonzero_ratio", "non-zero ratio",
     "weights above 1e-6 among all T x T entries (the Lazy authors' measure: counts a softmax's "
     "negligible weights as zero too)"},
    {"entropy", "entropy (nats)", "of the row-normalised weights, rows with mass"},
    {"row_mass_mean", "row mass mean", "sum_j a_ij over rows"},
    {"row_mass_min", "row mass min", ""},
    {"row_mass_max", "row mass max", ""},
    {"zero_rows", "zero rows", "fraction of rows whose weights are all 0"},
};

std::string per_layer_chart(const std::vector<RowData>& rows, const LayerPlot& p, const ReportOptions& o) {
  LineChart c;
  c.title = p.title;
  c.x_label = "layer";
  c.integer_x = true;
  c.y_label = p.stat;
  c.y_min = p.y_min;
  c.y_max = p.y_max;
  c.log_y = p.log_y;
  for (const auto& r : rows) {
    Series s{r.stat_label(), {}, true};
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

}  // namespace attnbench::results
