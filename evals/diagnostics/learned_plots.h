// SVG figures of a model's learned attention parameters (docs/diagnostics.md): tau per layer (one
// line per head) and the distance-bias profiles b[h, r] vs r (one figure per layer, one line per
// head). Drawn with results/svg.h.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "evals/diagnostics/model_diagnostics.h"

namespace attnbench::evals::diagnostics {

// Writes <dir>/tau_per_layer.svg (when the model has tau) and <dir>/distance_bias_layer<L>.svg
// (when it has a distance bias); returns the files written (none for a plain softmax model).
std::vector<std::filesystem::path> write_learned_plots(const ModelDiagnostics& d,
                                                       const std::filesystem::path& dir,
                                                       const std::string& title);

}  // namespace attnbench::evals::diagnostics
