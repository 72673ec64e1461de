// Small static SVG charts for the report (docs/diagnostics.md, "`attnbench report`": a static HTML
// page with tables and SVG plots): line charts (loss curves with seed bands, per-layer statistics,
// sink rate by key position, distance-bias profiles, tau per layer), grouped bar charts with whiskers (per-task accuracy ± stderr) and
// labelled scatter plots (sink mass against accuracy, one point per variant). Plain
// SVG 1.1 text with axes, ticks, labels and a legend; no scripts, no external resources.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnbench::results {

struct Series {
  // A constructor rather than an aggregate, so that callers name the first three members only.
  Series(std::string name = {}, std::vector<std::pair<double, double>> points = {}, bool markers = false)
      : name(std::move(name)), points(std::move(points)), markers(markers) {}

  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y); non-finite y values are skipped
  bool markers = false;                           // a dot at every point
  bool dashed = false;                            // a reference line (e.g. a uniform baseline)
  // A shaded band around the line (e.g. min..max over seeds): (lo, hi) at each point's x, as many
  // as points; empty = none. Points whose band is not finite are left out of the band only.
  std::vector<std::pair<double, double>> band;
};

struct LineChart {
  std::string title, x_label, y_label;
  std::vector<Series> series;
  int width = 560, height = 320;
  std::optional<double> y_min, y_max;  // fixed y range (e.g. [0, 1] for fractions)
  bool log_y = false;                  // log10 axis (loss); values <= 0 are skipped
  bool integer_x = false;              // x counts (layers, key positions): ticks at whole numbers only
};

struct Bar {
  std::optional<double> value;    // nullopt = missing (drawn as nothing, listed in the legend)
  std::optional<double> whisker;  // ± half-length (stderr)
};

struct BarChart {
  std::string title, y_label;
  std::vector<std::string> groups;       // x categories (tasks)
  std::vector<std::string> series;       // bars within a group (variants)
  std::vector<std::vector<Bar>> values;  // [group][series]
  // Per group: a dashed line across it at this value (e.g. the chance level 1/choices), or none.
  std::vector<std::optional<double>> reference;
  int width = 720, height = 340;
  std::optional<double> y_min, y_max;
};

// One labelled point per item: the label is written beside its dot, so that a dozen or more
// points stay told apart where a legend's cycled palette would repeat colours.
struct ScatterPoint {
  std::string label;
  double x = 0, y = 0;  // points with a non-finite coordinate are skipped
  // Whiskers: the point's uncertainty on each axis (drawn as x ± x_error, y ± y_error), or none.
  std::optional<double> x_error, y_error;
};

struct ScatterChart {
  std::string title, x_label, y_label;
  std::vector<ScatterPoint> points;
  // A dashed horizontal line at this y (e.g. the accuracy of guessing), labelled `y_reference_label`.
  // The y-axis always reaches it, so that a point's height reads as its distance from it rather
  // than from the lowest point.
  std::optional<double> y_reference;
  std::string y_reference_label;
  int width = 640, height = 400;
};

std::string render_line_chart(const LineChart& chart);
std::string render_bar_chart(const BarChart& chart);
std::string render_scatter_chart(const ScatterChart& chart);

// Round tick values covering [lo, hi] (steps of 1, 2 or 5 x 10^k), about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target = 5);
// A tick label: shortest of fixed / general notation that distinguishes steps of `step`.
std::string tick_label(double value, double step);
// Text with &, <, >, " escaped for XML/HTML.
std::string xml_escape(const std::string& text);
// The i-th colour of the charts' palette (cycled), and the dash pattern that tells the i-th series
// from the one sharing its colour: "" for the palette's first round, then dotted, dashed, ...
// (9 heads or 12 rows stay told apart).
const char* series_colour(size_t i);
const char* series_dash(size_t i);

}  // namespace attnbench::results
