#include "results/heatmap_scale.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace attnbench::results {

namespace {
constexpr Rgb kZero{255, 255, 255};
constexpr Rgb kFuture{222, 222, 222};
constexpr Rgb kLow{237, 244, 252};  // the ramp's ends: a faint blue for the smallest positive
constexpr Rgb kHigh{8, 48, 107};    // weight, a dark blue for the largest
constexpr Rgb kNegLow{254, 235, 226};  // negative weights (differential attention): a red ramp
constexpr Rgb kNegHigh{165, 15, 21};
}  // namespace

Rgb heatmap_colour(double a, double max_weight, bool future) {
  if (future) return kFuture;
  if (!(a != 0) || !(max_weight > 0)) return kZero;  // NaN too
  const double t = std::sqrt(std::min(1.0, std::abs(a) / max_weight));
  auto mix = [t](uint8_t lo, uint8_t hi) {
    return static_cast<uint8_t>(std::lround(lo + (static_cast<double>(hi) - lo) * t));
  };
  const Rgb lo = a > 0 ? kLow : kNegLow, hi = a > 0 ? kHigh : kNegHigh;
  return {mix(lo.r, hi.r), mix(lo.g, hi.g), mix(lo.b, hi.b)};
}

std::string hex_colour(Rgb c) { return fmt::format("#{:02x}{:02x}{:02x}", c.r, c.g, c.b); }

}  // namespace attnbench::results
