// SVG figures of whatever a model's attention variant learns (docs/diagnostics.md), drawn with
// results/svg.h: each per-head statistic over the layers (one line per head), each profile over its
// index per layer (one line per head). The variant names its statistics (variants/variant.h,
// learned()), so a new variant's parameters are plotted with no change here.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "evals/diagnostics/model_diagnostics.h"

namespace attnbench::evals::diagnostics {

// Writes <dir>/<stat>_per_layer.svg for each per-head statistic (e.g. tau_per_layer.svg) and
// <dir>/<stat>_layer<L>.svg for each profile (e.g. distance_bias_layer0.svg); returns the files
// written (none for a model whose variant learns nothing, e.g. softmax).
std::vector<std::filesystem::path> write_learned_plots(const ModelDiagnostics& d,
                                                       const std::filesystem::path& dir,
                                                       const std::string& title);

}  // namespace attnbench::evals::diagnostics
