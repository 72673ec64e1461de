// Scatter charts (results/svg.h render_scatter_chart): one labelled dot per point, labels moved
// off each other.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "results/svg.h"
#include "results/svg_frame.h"

namespace attnbench::results {

using namespace svg_frame;

namespace {

// A label's box in pixels: 11 px sans-serif, about 6.5 px per character and 12 px per line.
struct LabelBox {
  double x0, x1, y0, y1;
  bool overlaps(const LabelBox& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

// A point's whisker, as a half-width that is finite and non-negative, else 0 (no whisker).
double half_width(const std::optional<double>& error) {
  return error && std::isfinite(*error) && *error > 0 ? *error : 0.0;
}

// A coordinate for a point's tooltip: "0.6", or "0.6 ± 0.14" with its whisker.
std::string with_error(double v, const std::optional<double>& error) {
  const double e = half_width(error);
  return e > 0 ? fmt::format("{:.4g} ± {:.2g}", v, e) : fmt::format("{:.4g}", v);
}

// The dots of a scatter plot and their labels. A label goes beside its dot, towards the middle (a
// point near the right edge keeps its label inside the chart); where it would cover a dot or a
// label placed before, it moves a line down or up, up to 4 lines, so that clustered points stay
// readable.
std::string scatter_marks(const Frame& f, const std::vector<ScatterPoint>& points) {
  std::vector<LabelBox> placed;  // every dot, then the labels as they are placed
  for (const ScatterPoint& p : points) {
    if (std::isfinite(p.x) && std::isfinite(p.y)) {
      placed.push_back({f.sx(p.x) - 4, f.sx(p.x) + 4, f.sy(p.y) - 4, f.sy(p.y) + 4});
    }
  }
  std::string s;
  for (size_t i = 0; i < points.size(); ++i) {
    const ScatterPoint& p = points[i];
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
    const double cx = f.sx(p.x), cy = f.sy(p.y);
    const bool right_half = cx > (f.px0 + f.px1) / 2.0;
    const double lx = right_half ? cx - 7 : cx + 7, w = 6.5 * static_cast<double>(p.label.size());
    const LabelBox at{right_half ? lx - w : lx, right_half ? lx : lx + w, cy - 8, cy + 4};
    double shift = 0;
    for (double d : {0.0, 12.0, -12.0, 24.0, -24.0, 36.0, -36.0, 48.0, -48.0}) {
      const LabelBox b{at.x0, at.x1, at.y0 + d, at.y1 + d};
      if (std::none_of(placed.begin(), placed.end(), [&](const LabelBox& o) { return b.overlaps(o); })) {
        shift = d;
        break;
      }
    }
    placed.push_back({at.x0, at.x1, at.y0 + shift, at.y1 + shift});
    s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"><title>{}: ({}, {})"
                     "</title></circle>\n<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\">{}</text>\n",
                     cx, cy, series_colour(i), xml_escape(p.label), with_error(p.x, p.x_error),
                     with_error(p.y, p.y_error), lx, cy + 4 + shift, right_half ? "end" : "start",
                     xml_escape(p.label));
  }
  return s;
}

// The data range the chart shows: every point with its whiskers, and the reference line.
struct Range {
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
  void add(double x, double y) {
    x0 = std::min(x0, x);
    x1 = std::max(x1, x);
    y0 = std::min(y0, y);
    y1 = std::max(y1, y);
  }
};

Range data_range(const ScatterChart& c) {
  Range r;
  for (const auto& p : c.points) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
    const double ex = half_width(p.x_error), ey = half_width(p.y_error);
    r.add(p.x - ex, p.y - ey);
    r.add(p.x + ex, p.y + ey);
  }
  if (std::isfinite(r.x0) && c.y_reference && std::isfinite(*c.y_reference)) {
    r.y0 = std::min(r.y0, *c.y_reference);
    r.y1 = std::max(r.y1, *c.y_reference);
  }
  return r;
}

// The whiskers of every point with errors: a line across x ± x_error and one across y ± y_error,
// capped, in the point's colour.
std::string scatter_whiskers(const Frame& f, const std::vector<ScatterPoint>& points) {
  std::string s;
  for (size_t i = 0; i < points.size(); ++i) {
    const ScatterPoint& p = points[i];
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
    const double ex = half_width(p.x_error), ey = half_width(p.y_error), cx = f.sx(p.x), cy = f.sy(p.y);
    const char* colour = series_colour(i);
    if (ex > 0) {
      const double a = f.sx(p.x - ex), b = f.sx(p.x + ex);
      s += fmt::format("<path d=\"M{0:.1f},{1:.1f}H{2:.1f}M{0:.1f},{3:.1f}V{4:.1f}M{2:.1f},{3:.1f}V{4:.1f}\" "
                       "stroke=\"{5}\" fill=\"none\"/>\n", a, cy, b, cy - 3, cy + 3, colour);
    }
    if (ey > 0) {
      const double a = f.sy(p.y - ey), b = f.sy(p.y + ey);
      s += fmt::format("<path d=\"M{1:.1f},{0:.1f}V{2:.1f}M{3:.1f},{0:.1f}H{4:.1f}M{3:.1f},{2:.1f}H{4:.1f}\" "
                       "stroke=\"{5}\" fill=\"none\"/>\n", a, cx, b, cx - 3, cx + 3, colour);
    }
  }
  return s;
}

// The dashed reference line across the plot, its label at the right end above it.
std::string reference_line(const Frame& f, const ScatterChart& c) {
  if (!c.y_reference || !std::isfinite(*c.y_reference)) return "";
  const double y = f.sy(*c.y_reference);
  return fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#888\" "
                     "stroke-dasharray=\"4 3\"><title>{}: {:.4g}</title></line>\n"
                     "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"#666\">{}</text>\n",
                     f.px0, y, f.px1, y, xml_escape(c.y_reference_label), *c.y_reference, f.px1 - 4, y - 4,
                     xml_escape(c.y_reference_label));
}

}  // namespace

std::string render_scatter_chart(const ScatterChart& c) {
  Range r = data_range(c);
  std::string s = header(c.width, c.height, c.title);
  if (!std::isfinite(r.x0)) {
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#666\">no data</text>\n",
                     c.width / 2, c.height / 2);
    return s + "</svg>\n";
  }
  widen(r.x0, r.x1);
  widen(r.y0, r.y1);
  // A margin of 8% of the range on every side, so that no point (or its label) sits on an axis.
  const double px = (r.x1 - r.x0) * 0.08, py = (r.y1 - r.y0) * 0.08;
  Frame f{r.x0 - px, r.x1 + px, r.y0 - py, r.y1 + py, kLeft, c.width - kRight, kTop, c.height - kBottom};
  auto inside = [](std::vector<double> ticks, double lo, double hi) {
    ticks.erase(std::remove_if(ticks.begin(), ticks.end(),
                               [&](double t) { return t < lo - 1e-12 || t > hi + 1e-12; }),
                ticks.end());
    return ticks;
  };
  s += axes(f, inside(nice_ticks(f.x0, f.x1, 6), f.x0, f.x1),
            inside(nice_ticks(f.y0, f.y1), f.y0, f.y1), c.x_label, c.y_label);
  return s + reference_line(f, c) + scatter_whiskers(f, c.points) + scatter_marks(f, c.points) + "</svg>\n";
}

}  // namespace attnbench::results
