#include "results/svg.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "results/svg_frame.h"

namespace attnbench::results {

namespace {

// Colour-blind-friendly qualitative palette (Okabe & Ito 2008), black last.
constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                    "#E69F00", "#56B4E9", "#F0E442", "#000000"};
constexpr size_t kPaletteSize = sizeof(kPalette) / sizeof(*kPalette);
constexpr const char* kReferenceDash = "6,4";  // Series::dashed: a reference line

std::string dash_attribute(const char* dash) {
  return *dash ? fmt::format(" stroke-dasharray=\"{}\"", dash) : std::string();
}

// A bar (and its legend key) of a series past the palette: a dark outline in its dash pattern.
std::string outline_attribute(size_t i) {
  const char* dash = series_dash(i);
  return *dash ? " stroke=\"#222\" stroke-width=\"1\"" + dash_attribute(dash) : std::string();
}

}  // namespace

namespace svg_frame {

std::string header(int width, int height, const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<title>{2}</title>\n"
      "<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
      "<text x=\"{3}\" y=\"18\" text-anchor=\"middle\" font-size=\"13\" font-weight=\"bold\">{2}</text>\n",
      width, height, xml_escape(title), width / 2);
}

std::string axes(const Frame& f, const std::vector<double>& xticks, const std::vector<double>& yticks,
                 const std::string& x_label, const std::string& y_label) {
  std::string s;
  const double ystep = yticks.size() > 1 ? yticks[1] - yticks[0] : 1;
  for (double t : yticks) {
    const double y = f.py1 - (t - f.y0) / (f.y1 - f.y0) * (f.py1 - f.py0);
    const std::string label = f.log_y ? tick_label(std::pow(10.0, t), std::pow(10.0, t) / 10)
                                      : tick_label(t, ystep);
    s += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#e5e5e5\"/>\n"
                     "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
                     f.px0, y, f.px1, y, f.px0 - 4, y + 4, label);
  }
  const double xstep = xticks.size() > 1 ? xticks[1] - xticks[0] : 1;
  for (double t : xticks) {
    const double x = f.sx(t);
    s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#333\"/>\n"
                     "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
                     x, f.py1, f.py1 + 4, f.py1 + 16, tick_label(t, xstep));
  }
  s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#333\"/>\n"
                   "<line x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\" stroke=\"#333\"/>\n",
                   f.px0, f.py1, f.px1, f.py0);
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", (f.px0 + f.px1) / 2,
                   f.py1 + 32, xml_escape(x_label));
  s += fmt::format("<text transform=\"translate(14 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                   (f.py0 + f.py1) / 2, xml_escape(y_label));
  return s;
}

std::string legend(const std::vector<std::string>& names, int y, int width, const std::vector<bool>& lines) {
  std::string s;
  int x = kLeft;
  for (size_t i = 0; i < names.size(); ++i) {
    const int w = 24 + 7 * static_cast<int>(names[i].size());
    if (x + w > width && x > kLeft) {
      x = kLeft;
      y += kLegendRow;
    }
    if (i < lines.size() && lines[i]) {  // a line chart's series: a stroke in its colour and dash
      s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"{}/>",
                       x, y - 4, x + 12, y - 4, series_colour(i), dash_attribute(series_dash(i)));
    } else {
      s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"8\" fill=\"{}\"{}/>", x, y - 8,
                       series_colour(i), outline_attribute(i));
    }
    s += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", x + 16, y, xml_escape(names[i]));
    x += w;
  }
  return s;
}

int legend_rows(const std::vector<std::string>& names, int width) {
  int rows = names.empty() ? 0 : 1, x = kLeft;
  for (const auto& n : names) {
    const int w = 24 + 7 * static_cast<int>(n.size());
    if (x + w > width && x > kLeft) {
      x = kLeft;
      ++rows;
    }
    x += w;
  }
  return rows;
}

void widen(double& lo, double& hi) {
  if (!(lo < hi)) {
    const double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
}

}  // namespace svg_frame

using namespace svg_frame;

namespace {

// A series' band as one translucent polygon: along the upper edge, back along the lower one.
// Points where the band is not drawable (not finite, or <= 0 on a log axis) are left out.
std::string band_polygon(const Frame& f, const Series& series, const char* colour) {
  std::string upper, lower;
  for (size_t i = 0; i < series.band.size() && i < series.points.size(); ++i) {
    const double x = series.points[i].first;
    const auto [lo, hi] = series.band[i];
    if (!std::isfinite(x) || !std::isfinite(lo) || !std::isfinite(hi) || (f.log_y && lo <= 0)) continue;
    upper += fmt::format("{}{:.1f},{:.1f}", upper.empty() ? "" : " ", f.sx(x), f.sy(hi));
    lower = fmt::format(" {:.1f},{:.1f}", f.sx(x), f.sy(lo)) + lower;
  }
  if (upper.empty()) return "";
  return fmt::format("<polygon points=\"{}{}\" fill=\"{}\" fill-opacity=\"0.2\" stroke=\"none\"/>\n",
                     upper, lower, colour);
}

}  // namespace

const char* series_colour(size_t i) { return kPalette[i % kPaletteSize]; }

const char* series_dash(size_t i) {
  static constexpr const char* kDashes[] = {"", "2,2", "7,3", "7,3,2,3"};
  return kDashes[(i / kPaletteSize) % (sizeof(kDashes) / sizeof(*kDashes))];
}

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  widen(lo, hi);
  const int n = std::max(1, target);
  const double raw = hi / n - lo / n;  // (hi - lo) / n without overflow at +-1e308
  // Bounds that are not finite (a stored infinity) have no nice steps: their two ends only.
  if (!std::isfinite(raw) || !(raw > 0)) return {lo, hi};
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  // Multiples k * step (not a running sum, which would drift).
  for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k += 1) {
    ticks.push_back(k == 0 ? 0.0 : k * step);
  }
  if (ticks.empty()) return {lo, hi};  // k * step overflowed near float64's largest value
  return ticks;
}

std::string tick_label(double value, double step) {
  const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  if (std::abs(value) >= 1e5 || (value != 0 && std::abs(value) < 1e-4)) return fmt::format("{:.3g}", value);
  return fmt::format("{:.{}f}", value, std::min(decimals, 6));
}

namespace {

// The data range of a line chart: every drawable point and band end (y as log10 on a log axis).
// x0 stays +infinity when nothing is drawable.
struct DataRange {
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
};

DataRange line_chart_range(const LineChart& c) {
  DataRange r;
  const auto cover = [&](double x, double y) {
    if (!std::isfinite(x) || !std::isfinite(y) || (c.log_y && y <= 0)) return;
    const double v = c.log_y ? std::log10(y) : y;
    r.x0 = std::min(r.x0, x);
    r.x1 = std::max(r.x1, x);
    r.y0 = std::min(r.y0, v);
    r.y1 = std::max(r.y1, v);
  };
  for (const auto& s : c.series) {
    for (size_t i = 0; i < s.points.size(); ++i) {
      cover(s.points[i].first, s.points[i].second);
      if (i < s.band.size()) {
        cover(s.points[i].first, s.band[i].first);
        cover(s.points[i].first, s.band[i].second);
      }
    }
  }
  return r;
}

// Log-axis ticks (in log10 units): the decades and their 2x and 5x inside [y0, y1].
std::vector<double> log_ticks(double y0, double y1) {
  // 1, 2 and 5 per decade; where fewer than three of them fall in the range, every integer
  // mantissa; then, for a range within one such step (a loss from 4.1 down to 3.6), the round
  // values of the range itself (nice_ticks of 10^y0 .. 10^y1).
  const auto in_range = [&](double v) { return v >= y0 - 1e-9 && v <= y1 + 1e-9; };
  for (const std::vector<double>& mantissas :
       {std::vector<double>{1, 2, 5}, std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9}}) {
    std::vector<double> ticks;
    for (int e = static_cast<int>(std::floor(y0)); e <= static_cast<int>(std::ceil(y1)); ++e) {
      for (double m : mantissas) {
        if (in_range(e + std::log10(m))) ticks.push_back(e + std::log10(m));
      }
    }
    if (ticks.size() >= 3) return ticks;
  }
  std::vector<double> ticks;
  for (double v : nice_ticks(std::pow(10.0, y0), std::pow(10.0, y1))) {
    if (v > 0 && in_range(std::log10(v))) ticks.push_back(std::log10(v));
  }
  return ticks;
}

// A series' markers (if any) and then its line through the drawable points: the i-th colour, and
// the i-th dash past the palette (a reference line keeps its own dash).
std::string series_line(const Frame& f, const Series& series, size_t i) {
  const char* colour = series_colour(i);
  std::string s, path;
  for (const auto& [x, y] : series.points) {
    if (!std::isfinite(x) || !std::isfinite(y) || (f.log_y && y <= 0)) continue;
    path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "" : " ", f.sx(x), f.sy(y));
    if (series.markers) {
      s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"/>\n", f.sx(x),
                       f.sy(y), colour);
    }
  }
  if (!path.empty()) {
    s += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"{}/>\n",
                     path, colour, dash_attribute(series.dashed ? kReferenceDash : series_dash(i)));
  }
  return s;
}

}  // namespace

std::string render_line_chart(const LineChart& c) {
  std::vector<std::string> names;
  for (const auto& series : c.series) names.push_back(series.name);
  auto [x0, x1, y0, y1] = line_chart_range(c);
  const int rows = legend_rows(names, c.width);
  const int height = c.height + rows * kLegendRow;
  std::string s = header(c.width, height, c.title);
  if (!std::isfinite(x0)) {
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#666\">no data</text>\n",
                     c.width / 2, c.height / 2);
    return s + "</svg>\n";
  }
  if (!c.log_y) {
    if (c.y_min) y0 = *c.y_min;
    if (c.y_max) y1 = *c.y_max;
  }
  widen(x0, x1);
  widen(y0, y1);
  const std::vector<double> yt = nice_ticks(y0, y1), xt = nice_ticks(x0, x1, 6);
  // The axis covers the outermost ticks, so every tick lies inside the plot.
  y0 = std::min(y0, yt.front());
  y1 = std::max(y1, yt.back());
  Frame f{x0, x1, y0, y1, kLeft, c.width - kRight, kTop, c.height - kBottom, c.log_y};
  std::vector<double> xticks;
  for (double t : xt) {
    const bool whole = std::abs(t - std::round(t)) < 1e-9;
    if (t >= x0 - 1e-9 && t <= x1 + 1e-9 && (whole || !c.integer_x)) xticks.push_back(t);
  }
  s += axes(f, xticks, c.log_y ? log_ticks(y0, y1) : yt, c.x_label, c.y_label);
  for (size_t i = 0; i < c.series.size(); ++i) s += band_polygon(f, c.series[i], series_colour(i));
  for (size_t i = 0; i < c.series.size(); ++i) s += series_line(f, c.series[i], i);
  s += legend(names, c.height - 2, c.width, std::vector<bool>(names.size(), true));
  return s + "</svg>\n";
}

namespace {

// A bar is drawn when its value and its whisker's ends are finite: a stored infinity or 1e308
// (whose whisker overflows) has no place on an axis, and is left out as a missing value is.
bool drawable(const Bar& b) {
  if (!b.value) return false;
  const double w = b.whisker.value_or(0);
  return std::isfinite(*b.value - w) && std::isfinite(*b.value + w);
}


// One bar of series i at x, bar_w wide, with its whisker.
std::string bar(const Frame& f, const Bar& b, const std::string& series, size_t i, double x, double bar_w) {
  const double top = f.sy(std::max(*b.value, 0.0)), base = f.sy(std::min(*b.value, 0.0));
  std::string s = fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"{}>"
                              "<title>{}: {:.4g}{}</title></rect>\n",
                              x, top, bar_w * 0.92, std::max(0.5, base - top), series_colour(i),
                              outline_attribute(i),
                              xml_escape(series), *b.value,
                              b.whisker ? fmt::format(" ± {:.2g}", *b.whisker) : "");
  if (b.whisker && *b.whisker > 0) {
    const double cx = x + bar_w * 0.46, lo = f.sy(*b.value - *b.whisker), hi = f.sy(*b.value + *b.whisker);
    s += fmt::format("<path d=\"M{0:.1f},{1:.1f}V{2:.1f}M{3:.1f},{1:.1f}H{4:.1f}M{3:.1f},{2:.1f}H{4:.1f}\" "
                     "stroke=\"#222\" fill=\"none\"/>\n",
                     cx, lo, hi, cx - 3, cx + 3);
  }
  return s;
}

}  // namespace

std::string render_bar_chart(const BarChart& c) {
  double y0 = 0, y1 = 0;
  bool any = false;
  for (const auto& g : c.values) {
    for (const auto& b : g) {
      if (!drawable(b)) continue;
      const double w = b.whisker.value_or(0);
      y0 = any ? std::min(y0, *b.value - w) : *b.value - w;
      y1 = any ? std::max(y1, *b.value + w) : *b.value + w;
      any = true;
    }
  }
  const int rows = legend_rows(c.series, c.width);
  const int height = c.height + rows * kLegendRow;
  std::string s = header(c.width, height, c.title);
  if (!any || c.groups.empty()) {
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#666\">no data</text>\n",
                     c.width / 2, c.height / 2);
    return s + "</svg>\n";
  }
  y0 = std::min(0.0, c.y_min.value_or(y0));
  if (c.y_max) y1 = std::max(y1, *c.y_max);
  widen(y0, y1);
  const std::vector<double> yt = nice_ticks(y0, y1);
  y0 = std::min(y0, yt.front());
  y1 = std::max(y1, yt.back());
  Frame f{0, static_cast<double>(c.groups.size()), y0, y1, kLeft, c.width - kRight, kTop,
          c.height - kBottom};
  s += axes(f, {}, yt, "", c.y_label);
  const double group_w = (f.px1 - f.px0) / static_cast<double>(c.groups.size());
  const double bar_w = group_w * 0.8 / static_cast<double>(std::max<size_t>(1, c.series.size()));
  for (size_t g = 0; g < c.groups.size(); ++g) {
    const double gx = f.px0 + g * group_w;
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", gx + group_w / 2,
                     f.py1 + 16, xml_escape(c.groups[g]));
    for (size_t i = 0; i < c.series.size() && g < c.values.size() && i < c.values[g].size(); ++i) {
      if (drawable(c.values[g][i])) s += bar(f, c.values[g][i], c.series[i], i, gx + group_w * 0.1 + i * bar_w, bar_w);
    }
    if (g < c.reference.size() && c.reference[g] && std::isfinite(*c.reference[g])) {
      s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#222\" "
                       "stroke-dasharray=\"4 3\"><title>{}: {:.4g}</title></line>\n",
                       gx + group_w * 0.05, f.sy(*c.reference[g]), gx + group_w * 0.95, f.sy(*c.reference[g]),
                       xml_escape(c.groups[g]), *c.reference[g]);
    }
  }
  s += legend(c.series, c.height - 2, c.width, {});
  return s + "</svg>\n";
}

}  // namespace attnbench::results
