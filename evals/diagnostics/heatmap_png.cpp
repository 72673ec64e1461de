#include "evals/diagnostics/heatmap_png.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <stb/stb_image_write.h>

namespace attnbench::evals::diagnostics {

namespace {
constexpr int kMaxPixels = 768;
}  // namespace

std::vector<uint8_t> heatmap_pixels(const std::vector<float>& weights, int64_t T, int cell) {
  if (T <= 0 || static_cast<int64_t>(weights.size()) != T * T || cell <= 0) {
    throw std::invalid_argument("heatmap: expected " + std::to_string(T) + "^2 weights and cell > 0");
  }
  double max_weight = 0;
  for (int64_t i = 0; i < T; ++i) {
    for (int64_t j = 0; j <= i; ++j)
      max_weight = std::max(max_weight, std::abs(double(weights[i * T + j])));
  }
  const int64_t side = T * cell;
  std::vector<uint8_t> px(static_cast<size_t>(side * side * 3));
  for (int64_t y = 0; y < side; ++y) {
    const int64_t i = y / cell;
    for (int64_t x = 0; x < side; ++x) {
      const int64_t j = x / cell;
      const Rgb c = heatmap_colour(weights[i * T + j], max_weight, j > i);
      uint8_t* p = &px[static_cast<size_t>((y * side + x) * 3)];
      p[0] = c.r;
      p[1] = c.g;
      p[2] = c.b;
    }
  }
  return px;
}

void write_heatmap_png(const std::filesystem::path& path, const std::vector<float>& weights,
                       int64_t T, int cell) {
  if (cell <= 0) cell = static_cast<int>(std::max<int64_t>(1, kMaxPixels / std::max<int64_t>(T, 1)));
  const std::vector<uint8_t> px = heatmap_pixels(weights, T, cell);
  const int side = static_cast<int>(T * cell);
  if (!stbi_write_png(path.string().c_str(), side, side, 3, px.data(), side * 3)) {
    throw std::runtime_error("cannot write heatmap " + path.string());
  }
}

}  // namespace attnbench::evals::diagnostics
