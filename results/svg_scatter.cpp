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
    s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"><title>{}: ({:.4g}, {:.4g})"
                     "</title></circle>\n<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\">{}</text>\n",
                     cx, cy, series_colour(i), xml_escape(p.label), p.x, p.y, lx, cy + 4 + shift,
                     right_half ? "end" : "start", xml_escape(p.label));
  }
  return s;
}

}  // namespace

std::string render_scatter_chart(const ScatterChart& c) {
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
  for (const auto& p : c.points) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
    x0 = std::min(x0, p.x);
    x1 = std::max(x1, p.x);
    y0 = std::min(y0, p.y);
    y1 = std::max(y1, p.y);
  }
  std::string s = header(c.width, c.height, c.title);
  if (!std::isfinite(x0)) {
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#666\">no data</text>\n",
                     c.width / 2, c.height / 2);
    return s + "</svg>\n";
  }
  widen(x0, x1);
  widen(y0, y1);
  // A margin of 8% of the range on every side, so that no point (or its label) sits on an axis.
  const double px = (x1 - x0) * 0.08, py = (y1 - y0) * 0.08;
  Frame f{x0 - px, x1 + px, y0 - py, y1 + py, kLeft, c.width - kRight, kTop, c.height - kBottom};
  auto inside = [](std::vector<double> ticks, double lo, double hi) {
    ticks.erase(std::remove_if(ticks.begin(), ticks.end(),
                               [&](double t) { return t < lo - 1e-12 || t > hi + 1e-12; }),
                ticks.end());
    return ticks;
  };
  s += axes(f, inside(nice_ticks(f.x0, f.x1, 6), f.x0, f.x1),
            inside(nice_ticks(f.y0, f.y1), f.y0, f.y1), c.x_label, c.y_label);
  return s + scatter_marks(f, c.points) + "</svg>\n";
}

}  // namespace attnbench::results
