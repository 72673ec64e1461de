// Attention heatmaps as PNG (docs/diagnostics.md): one [T, T] weight matrix of one layer and head,
// query rows i top to bottom, keys j left to right, in the colours of results/heatmap_scale.h.
// Encoded by stb_image_write (Debian's libstb-dev).
#pragma once
#include <cstdint>
#include <filesystem>
#include <vector>

#include "results/heatmap_scale.h"

namespace attnbench::evals::diagnostics {

using results::heatmap_colour;
using results::Rgb;

// RGB pixels (row-major, 3 bytes each) of a T x T map drawn with `cell` x `cell` pixels per entry.
std::vector<uint8_t> heatmap_pixels(const std::vector<float>& weights, int64_t T, int cell);

// Writes the map as a PNG; `cell` 0 picks the largest cell size keeping the image <= 768 px.
// Throws std::runtime_error when the file cannot be written.
void write_heatmap_png(const std::filesystem::path& path, const std::vector<float>& weights,
                       int64_t T, int cell = 0);

}  // namespace attnbench::evals::diagnostics
