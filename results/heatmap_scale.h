// The colour scale of attention heatmaps (docs/diagnostics.md): weights > 0 on a light-to-dark blue
// ramp scaled to the map's largest |weight| (sqrt scale, so small weights stay visible next to a
// sink), weights < 0 (differential attention) on a red ramp of the same scale, exact zeros of the
// causal triangle white (Elastic-Softmax sparsity), future keys (j > i) grey. The PNG of a map
// (evals/diagnostics/heatmap_png.h) and the report's colour bar (results/report) draw with it.
#pragma once
#include <cstdint>
#include <string>

namespace attnbench::results {

struct Rgb {
  uint8_t r, g, b;
};

// The colour of weight `a` at (i, j) of a map whose largest |weight| is `max_weight`.
Rgb heatmap_colour(double a, double max_weight, bool future);

// "#rrggbb"
std::string hex_colour(Rgb c);

}  // namespace attnbench::results
