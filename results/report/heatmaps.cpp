// The report's "heatmaps" section: attention heatmaps of a chosen layer and head. The caller
// computes each map as a PNG (evals/diagnostics/heatmap_png.h); this section draws it as an SVG
// figure with its axes, the window's tokens as tick labels and a colour bar, the PNG embedded, so
// that the figure stands alone (an <img> SVG loads nothing from outside itself).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "core/common/error.h"
#include "results/heatmap_scale.h"
#include "results/report/page.h"
#include "results/svg.h"

namespace attnbench::results {

namespace {

// RFC 4648 base64, for the PNG's data: URI.
std::string base64(const std::string& bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t v = 0;
    for (size_t k = 0; k < 3; ++k) v = v << 8 | (k < n ? static_cast<uint8_t>(bytes[i + k]) : 0u);
    for (size_t k = 0; k < 4; ++k) out += k <= n ? kAlphabet[(v >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({path.string()}, "cannot read the heatmap just written");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Layout in px: the map is T cells of `cell` px; token labels left of it and under it.
struct Layout {
  int64_t T = 0;
  double cell = 0;
  int left = 84, top = 34, map = 0, bar_x = 0, width = 0, height = 0;
  explicit Layout(int64_t tokens) : T(tokens) {
    cell = std::max(4.0, 512.0 / static_cast<double>(T));
    map = static_cast<int>(std::lround(cell * static_cast<double>(T)));
    bar_x = left + map + 18;
    width = bar_x + 80;
    height = top + map + 84;
  }
};

// The tokens as tick labels: every token up to 64, else every k-th; each cut to 10 characters'
// worth of bytes at a character boundary.
std::string token_ticks(const Layout& l, const std::vector<std::string>& tokens) {
  if (static_cast<int64_t>(tokens.size()) != l.T) return "";
  const int64_t every = (l.T + 63) / 64;
  const double font = std::min(9.0, std::max(5.0, l.cell * static_cast<double>(every) - 1));
  std::string s = fmt::format("<g font-size=\"{:.0f}\" font-family=\"monospace\" fill=\"#333\">\n", font);
  for (int64_t i = 0; i < l.T; i += every) {
    std::string t = tokens[i];
    size_t cut = 0, chars = 0;
    while (cut < t.size() && chars < 10) {
      ++cut;
      while (cut < t.size() && (static_cast<uint8_t>(t[cut]) & 0xC0) == 0x80) ++cut;  // continuation
      ++chars;
    }
    if (cut < t.size()) t = t.substr(0, cut) + "\u2026";
    const double c = (static_cast<double>(i) + 0.5) * l.cell;
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>\n",
                     l.left - 3, l.top + c, xml_escape(t));
    s += fmt::format("<text transform=\"translate({:.1f} {}) rotate(90)\" dominant-baseline=\"middle\">{}</text>\n",
                     l.left + c, l.top + l.map + 3, xml_escape(t));
  }
  return s + "</g>\n";
}

// The colour bar: the scale from the map's largest weight (top) down to its smallest (0, or the
// most negative for differential attention), sampled through heatmap_colour (sqrt scale).
std::string colour_bar(const Layout& l, const HeatmapFigure& f, const std::string& id) {
  const double hi = f.max_weight, lo = std::min(0.0, f.min_weight), scale = std::max(hi, -lo);
  if (!(hi > lo) || !(scale > 0)) return "";
  std::string s = fmt::format("<defs><linearGradient id=\"{}\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">\n", id);
  constexpr int kStops = 32;
  for (int k = 0; k <= kStops; ++k) {
    const double v = hi - (hi - lo) * k / kStops;
    s += fmt::format("<stop offset=\"{:.4f}\" stop-color=\"{}\"/>\n", static_cast<double>(k) / kStops,
                     hex_colour(heatmap_colour(v, scale, false)));
  }
  s += "</linearGradient></defs>\n";
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"{}\" fill=\"url(#{})\" stroke=\"#888\"/>\n",
                   l.bar_x, l.top, l.map, id);
  std::vector<double> ticks = {hi, hi / 4, 0};
  if (lo < 0) ticks.push_back(lo);
  for (double v : ticks) {
    const double y = l.top + (hi - v) / (hi - lo) * l.map;
    s += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#333\"/>"
                     "<text x=\"{3}\" y=\"{1:.1f}\" dominant-baseline=\"middle\">{4:.3g}</text>\n",
                     l.bar_x + 14, y, l.bar_x + 18, l.bar_x + 20, v);
  }
  return s + fmt::format("<text transform=\"translate({} {}) rotate(90)\" text-anchor=\"middle\">"
                         "attention weight (sqrt scale)</text>\n",
                         l.bar_x + 62, l.top + l.map / 2);
}

// Writes heatmap_<run>.svg around the PNG f.file; returns its name.
std::string heatmap_svg(const ReportOptions& o, const HeatmapFigure& f, const std::string& caption) {
  const Layout l(static_cast<int64_t>(std::max<size_t>(f.tokens.size(), 1)));
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<title>{2}</title>\n"
      "<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
      "<text x=\"{3}\" y=\"18\" text-anchor=\"middle\" font-size=\"13\" font-weight=\"bold\">{2}</text>\n",
      l.width, l.height, xml_escape(caption), l.width / 2);
  s += fmt::format("<image x=\"{0}\" y=\"{1}\" width=\"{2}\" height=\"{2}\" preserveAspectRatio=\"none\" "
                   "style=\"image-rendering:pixelated\" href=\"data:image/png;base64,{3}\"/>\n"
                   "<rect x=\"{0}\" y=\"{1}\" width=\"{2}\" height=\"{2}\" fill=\"none\" stroke=\"#888\"/>\n",
                   l.left, l.top, l.map, base64(read_bytes(o.out / f.file)));
  s += token_ticks(l, f.tokens);
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">key j (left to right)</text>\n",
                   l.left + l.map / 2, l.height - 6);
  s += fmt::format("<text transform=\"translate(12 {}) rotate(-90)\" text-anchor=\"middle\">query i (top to "
                   "bottom)</text>\n",
                   l.top + l.map / 2);
  s += colour_bar(l, f, "scale_" + f.run_id);
  const std::string name = std::filesystem::path(f.file).replace_extension(".svg").string();
  write_text(o.out / name, s + "</svg>\n");
  return name;
}

// Attention heatmaps (PNG files computed by the caller).
std::string heatmaps_section(const ReportOptions& o) {
  std::string h = "<section id=\"heatmaps\">\n<h2>Attention heatmaps</h2>\n";
  if (!o.heatmap_text.empty()) h += "<p class=\"meta\">Text: " + esc(o.heatmap_text) + ".</p>\n";
  h += "<p class=\"meta\">Rows are queries i (top to bottom), columns keys j, labelled with the "
       "window's tokens; blue = weight (sqrt scale to the map's maximum, colour bar beside), red = "
       "negative weight, white = exactly 0, grey = future keys.</p>\n";
  if (o.heatmaps.empty()) h += "<p class=\"note\">No heatmaps: no finished runs.</p>\n";
  for (const auto& f : o.heatmaps) {
    const std::string caption = fmt::format("{} ({}), layer {}, head {}", f.label, f.run_id, f.layer, f.head);
    if (f.file.empty()) {
      h += "<p class=\"note\">" + esc(caption + ": " + f.note) + "</p>\n";
    } else {
      h += fmt::format("<figure><img src=\"{}\" alt=\"{}\"><figcaption>{}</figcaption></figure>\n",
                       esc(heatmap_svg(o, f, caption)), esc(caption),
                       esc(caption + (f.note.empty() ? "" : "; " + f.note)));
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
