// The report's "hidden-states" section: massive activations, top |h|, kurtosis and the collapse
// measures of the residual stream per layer.
#include <fmt/format.h>

#include "results/report/page.h"

namespace attnbench::results {

namespace {

// The residual stream after each block (docs/diagnostics.md, "Published metrics", hidden states):
// massive activations of Sun et al., the largest |h|, kurtosis, and the collapse measures.
std::string hidden_states_section(const std::vector<RowData>& rows, const ReportOptions& o) {
  std::string h = "<section id=\"hidden-states\">\n<h2>Hidden states per layer</h2>\n";
  const LayerPlot plots[] = {
      {"massive_activations", "massive activations per layer (|h| > 100 and > 1000x the median, per window)", -1,
       0.0, std::nullopt, false},
      {"top_activation", "largest |h| per layer (mean over windows)", 1, std::nullopt, std::nullopt, true},
      {"kurtosis", "activation kurtosis per layer (Pearson, 3 = Gaussian)", -1, std::nullopt, std::nullopt, false},
      {"mean_cosine", "mean pairwise cosine of token states per layer (1 = collapsed)", -1, std::nullopt, 1.0, false},
      {"effective_rank", "effective rank of the states per layer (1 = collapsed)", -1, 0.0, std::nullopt, false}};
  std::string figures;
  for (const auto& p : plots) figures += per_layer_chart(rows, p, o);
  if (figures.empty()) {
    return h + "<p class=\"note\">No hidden-state statistics recorded (<code>attnbench attn-stats "
               "--db</code> records them).</p>\n</section>\n";
  }
  return h + figures + measurement_note(rows) + "<p class=\"notes\">The residual stream after each block, per window and "
                       "averaged over windows, then over the row's runs (docs/diagnostics.md, "
                       "\"Published metrics\").</p>\n</section>\n";
}

std::string render(const ReportPage& page) {
  return hidden_states_section(page.rows, page.options);
}

ReportSection section() {
  ReportSection s;
  s.id = "hidden-states";
  s.nav = "hidden states";
  s.order = 90;
  s.render = render;
  return s;
}

const RegisterReportSection kRegistered(section());

}  // namespace

}  // namespace attnbench::results
