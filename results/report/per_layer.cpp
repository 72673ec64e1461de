// The report's "attention" section: sink mass, sparsity, non-zero ratio, sink rate and entropy per
// layer, one line per row.
#include <fmt/format.h>

#include "results/report/page.h"

namespace attnbench::results {

namespace {

// The attention statistics per layer: where the mass goes and how sparse the weights are, with the
// Lazy authors' non-zero ratio beside exact-zero sparsity (docs/diagnostics.md, the two differ).
std::string per_layer_section(const std::vector<RowData>& rows, bool any_stats,
                              const ReportOptions& o) {
  std::string h = "<section id=\"attention\">\n<h2>Sink mass, sparsity and non-zero ratio per layer</h2>\n";
  if (!any_stats) return h + "<p class=\"note\">No attention statistics recorded.</p>\n</section>\n";
  const LayerPlot plots[] = {
      {"sink_mass", "sink mass per layer (mean over heads)", -1, 0.0, 1.0, false},
      {"sparsity", "sparsity per layer (exact zeros among causal entries, mean over heads)", -1, 0.0, 1.0, false},
      {"nonzero_ratio", "non-zero ratio per layer ((a > 1e-6) over all T² entries, mean over heads)", -1, 0.0,
       1.0, false},
      {"sink_rate", "sink rate per layer (fraction of heads)", -1, 0.0, 1.0, false},
      {"entropy", "entropy per layer (nats, mean over heads)", -1, std::nullopt, std::nullopt, false}};
  for (const auto& p : plots) h += per_layer_chart(rows, p, o);
  return h + measurement_note(rows) + "</section>\n";
}

std::string render(const ReportPage& page) {
  return per_layer_section(page.rows, page.any_stats, page.options);
}

ReportSection section() {
  ReportSection s;
  s.id = "attention";
  s.nav = "per layer";
  s.order = 80;
  s.render = render;
  return s;
}

const RegisterReportSection kRegistered(section());

}  // namespace

}  // namespace attnbench::results
