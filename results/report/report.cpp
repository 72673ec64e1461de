// `attnbench report` (results/report/report.h): the page around its registered sections.
#include "results/report/report.h"

#include <algorithm>
#include <ctime>

#include <fmt/format.h>

#include "core/common/error.h"
#include "results/report/page.h"
#include "results/sqlite.h"

namespace attnbench::results {

namespace {

constexpr const char* kStyle = R"(body{font-family:sans-serif;margin:24px;max-width:1352px;color:#222}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:12px;display:block;overflow-x:auto;max-width:100%}
th,td{border:1px solid #ddd;padding:3px 4px}details{margin:8px 0}summary{cursor:pointer;font-size:13px}
th{background:#f4f4f4}td.num,th.num{text-align:right}td.missing{color:#999}
figure{display:inline-table;margin:8px;vertical-align:top}
figcaption{display:table-caption;caption-side:bottom;font-size:12px;color:#555}
img[src^="heatmap_"]{width:620px;height:auto}
.notes{font-size:12px;color:#555}.note{color:#8a5a00}p.meta{color:#666;font-size:12px})";

// The page up to its sections: title, style, when and from what it was made, the navigation.
std::string page_head(Db& db, const ReportOptions& o, const std::vector<SweepMember>& members) {
  std::time_t now = std::time(nullptr);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  const std::string subject = report_subject(o);
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
                  esc("attnbench report: " + subject) + "</title>\n<style>" + kStyle +
                  "</style>\n</head>\n<body>\n";
  h += "<h1>" + esc("attnbench report: " + subject) + "</h1>\n";
  h += fmt::format("<p class=\"meta\">{} runs ({} finished) from {}; generated {}.</p>\n", members.size(),
                   std::count_if(members.begin(), members.end(),
                                 [](const SweepMember& m) { return m.status == "finished"; }),
                   esc(db.path().string()), when);
  std::vector<std::string> links;
  for (const ReportSection* s : report_sections()) {
    links.push_back(fmt::format("<a href=\"#{}\">{}</a>", s->id, esc(s->nav)));
  }
  return h + "<nav>" + join(links, " · ") + "</nav>\n";
}

}  // namespace

std::string report_subject(const ReportOptions& o) {
  if (o.runs.empty()) return "sweep " + o.sweep;
  return o.runs.size() == 1 ? "run " + o.runs[0] : fmt::format("{} runs", o.runs.size());
}

std::vector<SweepMember> report_members(Db& db, const ReportOptions& o) {
  return o.runs.empty() ? sweep_members(db, o.sweep) : run_members(db, o.runs);
}

Comparison paired_comparison(Db& db, const ReportOptions& o) {
  CompareRequest request;
  request.table.sweep = o.sweep;
  request.table.runs = o.runs;
  request.baseline = o.baseline;
  return compare_to_baseline(db, request);
}

std::filesystem::path write_report(Db& db, const ReportOptions& o) {
  const std::vector<SweepMember> members = report_members(db, o);
  // Before anything is written: a bad --baseline is a usage error, not half a page.
  const Comparison paired = o.paired ? *o.paired : paired_comparison(db, o);
  TableRequest request;
  request.sweep = o.sweep;
  request.runs = o.runs;
  const ResultTable table = build_table(db, request);
  std::filesystem::create_directories(o.out);
  std::map<std::string, RunStats> stats;
  const std::vector<RowData> rows = row_data(db, table, stats);
  const bool any_stats = std::any_of(rows.begin(), rows.end(), [](const RowData& r) { return !r.stats.empty(); });
  const ReportPage page{db, o, members, table, rows, any_stats, paired};

  std::string h = page_head(db, o, members);
  for (const ReportSection* s : report_sections()) h += s->render(page);
  h += "</body>\n</html>\n";

  const std::filesystem::path path = o.out / "index.html";
  write_text(path, h);
  return path;
}

}  // namespace attnbench::results
