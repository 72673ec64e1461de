// `attnbench report`: one static HTML page per sweep (docs/diagnostics.md, "`attnbench report`").
// No network, no JavaScript: the page and its figures (SVG written here, heatmap PNGs computed by
// the caller from checkpoints) lie side by side in one folder. Each section is one file in
// results/report/ that registers itself (results/report/page.h); in page order, by element id
// (checked by tests/harness/cli/report_*.sh in a real browser):
//   overview       what was trained: model, attention variants, training budget, data, tasks and
//                  items scored, code version and machine, from the runs' configs and metadata
//   results        the paper-style table (results/query.h build_table), HTML rendering
//   side-by-side   per table row: seeds, model-level sink mass, sink rate, sparsity (mean ± std over
//                  seeds), Avg and per-task accuracy; a scatter of sink mass vs Avg accuracy
//   paired         every row against a baseline row: test, n, diff, se, unpaired se, p per (row,
//                  task) (results/compare.h)
//   diagnostics    model-level attention summaries (attn_stats rows with layer = head = -1)
//   sink-rate      Sink_k and alpha_k of Gu et al. by key position k, one line per row, alpha_k
//                  beside its uniform baseline
//   loss-curves    training loss raw and smoothed (TensorBoard's debiased EMA) and validation
//                  loss: a row's mean over seeds with its min..max band, single runs and
//                  unfinished runs as plain lines (metrics table)
//   task-bars      per-task accuracy of every row, whiskers = standard error of the mean, dashed
//                  = chance (1 / choices, from the samples)
//   attention      sink mass, sparsity, non-zero ratio, sink rate and entropy per layer, one line
//                  per row (layer rows, head = -1)
//   hidden-states  massive activations, top |h|, kurtosis, mean cosine and effective rank of the
//                  residual stream per layer, one line per row
//   learned        the statistics variants record as learned: tau per layer, the distance-bias
//                  profiles b[h, r] (attn_stats.learned)
//   heatmaps       attention heatmaps of a chosen layer and head (PNG files given by the caller)
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "results/compare.h"
#include "results/runs.h"

namespace attnbench::results {

class Db;

struct HeatmapFigure {
  std::string run_id;
  std::string label;     // the run's cell
  int64_t layer = 0, head = 0;
  std::string file;      // PNG path relative to the report folder; "" when not computed
  std::string note;      // what it shows, or why it is missing ("no checkpoint under ...")
  // The map's window, for its axes and colour bar (results/heatmap_scale.h): T tokens, their text
  // (one label per position, printable), and the extremes of the causal weights.
  std::vector<std::string> tokens;
  double max_weight = 0, min_weight = 0;
};

struct ReportOptions {
  std::string sweep;
  // Instead of a sweep: these runs (full ids), e.g. standalone `attnbench train` runs and imported
  // models scored with `eval --db` (results/query.h TableRequest::runs); the sweep is then ignored.
  std::vector<std::string> runs;
  std::filesystem::path out;  // the report folder (created); index.html and the figures go here
  std::vector<HeatmapFigure> heatmaps;
  std::string heatmap_text;   // what text the heatmaps show (e.g. "first 64 tokens of val.bin")
  // The paired-difference section: a `results compare --baseline` selector, "" = the default row
  // (results/compare.h default_baseline_row). `paired`, when given, is that comparison already
  // computed (the CLI computes it before the heatmaps, so that a bad selector fails before any
  // checkpoint is read).
  std::string baseline;
  std::optional<Comparison> paired;
};

// The paired-difference section's comparison: every row of the sweep's default table against
// options.baseline, with results/compare.h's defaults (10,000 bootstrap resamples, seed 0).
// UsageError for a selector that names no row.
Comparison paired_comparison(Db& db, const ReportOptions& options);

// What the page is of: "sweep NAME", or "3 runs" when options.runs names them.
std::string report_subject(const ReportOptions& options);
// The page's runs: the sweep's members, or options.runs (with their cells and status).
std::vector<SweepMember> report_members(Db& db, const ReportOptions& options);

// Writes out/index.html and its SVG figures; returns the page's path.
std::filesystem::path write_report(Db& db, const ReportOptions& options);

}  // namespace attnbench::results
