// The frame every chart of results/svg.h is drawn in: the plot area and its margins, the title,
// the axes with their ticks, the legend. Shared by svg.cpp and svg_scatter.cpp; not part of the API.
#pragma once
#include <cmath>
#include <string>
#include <vector>

namespace attnbench::results::svg_frame {

constexpr int kLeft = 64, kRight = 16, kTop = 30, kBottom = 46, kLegendRow = 16;

struct Frame {
  double x0, x1, y0, y1;  // data range
  int px0, px1, py0, py1; // plot area in pixels (py0 is the top)
  bool log_y = false;
  double sx(double x) const { return px0 + (x - x0) / (x1 - x0) * (px1 - px0); }
  double sy(double y) const {
    const double v = log_y ? std::log10(y) : y;
    return py1 - (v - y0) / (y1 - y0) * (py1 - py0);
  }
};

// The <svg> element's opening, a white background and the title.
std::string header(int width, int height, const std::string& title);
// Axes, grid lines, tick labels and axis labels.
std::string axes(const Frame& f, const std::vector<double>& xticks, const std::vector<double>& yticks,
                 const std::string& x_label, const std::string& y_label);
// One legend entry per series, in rows under the x-axis label: a line sample in the series' colour
// and dash where lines[i] (line charts), else a swatch (bars; outlined past the palette).
std::string legend(const std::vector<std::string>& names, int y, int width, const std::vector<bool>& lines);
// The rows that legend takes.
int legend_rows(const std::vector<std::string>& names, int width);
// An empty range [v, v] made a range around v.
void widen(double& lo, double& hi);

}  // namespace attnbench::results::svg_frame
