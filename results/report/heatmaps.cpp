// The report's "heatmaps" section: attention heatmaps of a chosen layer and head (PNG files the
// caller computed from checkpoints).
#include <fmt/format.h>

#include "results/report/page.h"

namespace attnbench::results {

namespace {

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

std::string render(const ReportPage& page) {
  return heatmaps_section(page.options);
}

ReportSection section() {
  ReportSection s;
  s.id = "heatmaps";
  s.nav = "heatmaps";
  s.order = 110;
  s.render = render;
  return s;
}

const RegisterReportSection kRegistered(section());

}  // namespace

}  // namespace attnbench::results
