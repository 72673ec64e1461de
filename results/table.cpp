#include "results/table.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/common/error.h"
#include "core/common/paper_tasks.h"
#include "core/common/registry.h"

namespace attnbench::results {

namespace {
Registry<TableFormat>& registry() {
  static Registry<TableFormat> formats("table format");  // function-local: safe from init order
  return formats;
}
}  // namespace

RegisterTableFormat::RegisterTableFormat(TableFormat format) { registry().add(format.name, format); }

const TableFormat& find_table_format(const std::string& name) {
  return registry().get(name, "--format: ");
}

std::vector<std::string> table_format_names() { return registry().names(); }

std::string render_table(const ResultTable& table, const std::string& format) {
  return find_table_format(format).render(table);
}

std::string format_with_error(double value, const std::optional<double>& std_error) {
  if (!std_error || !std::isfinite(*std_error) || *std_error <= 0 || !std::isfinite(value)) {
    return fmt::format("{:.4g}", value);
  }
  // The decimal place of the error's second significant digit; none below the units.
  const int decimals = std::max(0, 1 - static_cast<int>(std::floor(std::log10(*std_error))));
  return fmt::format("{:.{}f} ± {:.{}f}", value, decimals, *std_error, decimals);
}

std::string format_value(const Column& column, double value) {
  if (column.accuracy) return fmt::format("{:.1f}", 100.0 * value);
  if (column.diagnostic || column.metric == "bits_per_byte") return fmt::format("{:.3f}", value);
  return fmt::format("{:.2f}", value);
}

std::string format_mean_std(const Column& column, double mean, const std::optional<double>& std,
                            const std::string& pm) {
  std::string s = format_value(column, mean);
  if (std) s += pm + format_value(column, *std);
  return s;
}

std::string column_label(const Column& column) {
  if (column.diagnostic) return column.metric == "sink_mass" ? "sink mass" : column.metric;
  return column.task + " " + column.metric + (column.lower_is_better ? " ↓" : " ↑");
}

std::string row_value(const std::string& value) { return value.empty() ? kMissing : value; }

std::string baseline_marker(const Cell& cell) {
  if (!cell.vs_baseline) return "";
  switch (cell.vs_baseline->mark) {
    case BaselineTest::Mark::Better: return kBetterMarker;
    case BaselineTest::Mark::Worse: return kWorseMarker;
    case BaselineTest::Mark::None: return "";
  }
  return "";
}

std::string baseline_standing(const Cell& cell) {
  if (!cell.vs_baseline) return "";
  const std::string mark = baseline_marker(cell);
  return mark == kBetterMarker ? "better" : mark == kWorseMarker ? "worse" : "not_significant";
}

namespace {

// "attention.variant=lazy, attention.renormalize=true"; `results compare` joins with sep ",".
std::string row_label(const ResultTable& t, const Row& r, const std::string& sep = ", ") {
  std::vector<std::string> keys;
  for (size_t i = 0; i < r.keys.size(); ++i) keys.push_back(t.row_keys[i] + "=" + row_value(r.keys[i]));
  return keys.empty() ? "(all)" : join(keys, sep);
}

// --metric logprob | bits_per_byte: what the numbers are.
void gold_legend(const ResultTable& t, std::vector<std::string>& out) {
  for (const Column& c : t.columns) {
    if (c.metric == "logprob") {
      out.push_back("logprob: the gold continuation's log-likelihood, mean over documents, in nats "
                    "(docs/evaluation.md); not in Avg.");
      return;
    }
    if (c.metric == "bits_per_byte") {
      out.push_back("bits_per_byte: -(sum of the gold continuations' log-likelihoods) / (sum of "
                    "their UTF-8 bytes) / ln 2 (docs/evaluation.md); not in Avg.");
      return;
    }
  }
}

// --baseline: the rule behind ▲ / ▼, then every marked cell with its test, n and p.
void baseline_legend(const ResultTable& t, std::vector<std::string>& out) {
  const BaselineInfo& b = *t.baseline;
  out.push_back(fmt::format(
      "{} / {}: better / worse than the baseline row {} (marked {}) at p < {}: a two-sided paired "
      "bootstrap over the items both rows scored ({} resamples, seed {}; acc and acc_norm on their "
      "per-item values, logprob, bits_per_byte and perplexities on the gold log-likelihood) where "
      "every paired run has per-item samples of the task (acc_norm: with the choices' lengths), "
      "else a one-sided Welch t-test over seeds (H1: the row is better, so it never marks {}; needs "
      ">= 2 seeds a side). No "
      "correction for multiple comparisons. Every test with its n and p: see attnbench results "
      "compare --sweep {} --baseline {} with the same --rows, --where, --tasks and --metric.",
      kBetterMarker, kWorseMarker, b.row, kBaselineLabel, kBaselineAlpha, b.resamples, b.seed,
      kWorseMarker, t.sweep, b.selector));
  int untested = 0;
  for (const Row& r : t.rows) {
    for (size_t i = 0; i < r.cells.size(); ++i) {
      const Cell& c = r.cells[i];
      const std::string mark = baseline_marker(c);
      untested += !r.baseline && c.n > 0 && !t.columns[i].diagnostic && !c.vs_baseline;
      if (mark.empty()) continue;
      out.push_back(fmt::format("{} {}, {}: p = {:.2g} ({} of {}, {}).", mark, row_label(t, r, ","),
                                column_label(t.columns[i]), c.vs_baseline->p, c.vs_baseline->test,
                                c.vs_baseline->measure, c.vs_baseline->n));
    }
  }
  if (untested > 0) {
    out.push_back(fmt::format("{} cell(s) not tested against the baseline: no per-item samples "
                              "and fewer than 2 seeds a side (or no spread).", untested));
  }
}

// What Avg averages: the accuracies of the paper's nine tasks, as the paper's Avg does; other
// accuracy columns (LAMBADA, Social IQa) are named as shown but not averaged.
void avg_legend(const ResultTable& t, std::vector<std::string>& out) {
  std::vector<std::string> outside;
  for (const Column& c : t.columns) {
    if (c.accuracy && !c.in_average) outside.push_back(c.task);
  }
  std::string line = "Avg: the mean of the accuracies of the paper's nine tasks (" + join(paper_tasks()) +
                     ") present in the table";
  if (!outside.empty()) line += "; " + join(outside) + " shown, not averaged";
  out.push_back(line + ".");
}

}  // namespace

std::vector<std::string> table_legend(const ResultTable& t) {
  bool tie = false, partial = false, no_se = false, incomplete = false, ppl = false, diag = false;
  for (const Column& c : t.columns) ppl = ppl || c.lower_is_better;
  for (const Column& c : t.columns) diag = diag || c.diagnostic;
  for (const Row& r : t.rows) {
    for (size_t i = 0; i < r.cells.size(); ++i) {
      const Cell& c = r.cells[i];
      tie = tie || c.within_std_error;
      partial = partial || (c.n > 0 && c.n < r.n);
      no_se = no_se || (c.n > 0 && !c.std_error && !t.columns[i].diagnostic);
    }
    incomplete = incomplete || (r.avg && !r.avg->complete());
  }
  std::vector<std::string> out;
  out.push_back(fmt::format(
      "{}, metric {}: mean ± sample std (n-1) over the finished runs (seeds) of each row; "
      "n = finished runs; accuracies in %; {} = missing (never 0).",
      t.runs.empty() ? "Sweep " + t.sweep : "Runs " + join(t.runs), t.metric_choice, kMissing));
  if (ppl) out.push_back("↓ lower is better, ↑ higher is better.");
  if (t.has_avg) avg_legend(t, out);
  gold_legend(t, out);
  out.push_back("Bold: the best row of a column (none where every row ties).");
  if (tie) {
    out.push_back(fmt::format(
        "{}: not distinguishable from the bold best: the gap is within the combined standard error "
        "sqrt(se_best^2 + se^2), se = sqrt(sum of the runs' eval stderr^2) / n.", kTieMarker));
  }
  if (no_se) out.push_back("Some cells have no recorded stderr and are not compared with the best.");
  if (diag) {
    out.push_back("sink mass: mean attention weight on the first token; gu_sink_rate: Gu et al.'s "
                  "sink rate, the share of (window, layer, head) whose mean weight on the first "
                  "token exceeds epsilon; sparsity: share of exact zeros among causal attention "
                  "weights; nonzero_ratio: share of weights above 1e-6 among all T x T entries (the "
                  "Lazy authors' measure, which also counts a softmax's negligible weights as zero: "
                  "a sparsity above softmax's 0 with an equal nonzero_ratio zeroed only weights "
                  "already near 0); averaged over layers and heads on held-out text "
                  "(docs/diagnostics.md); diagnostics, not scores: no best, not in Avg.");
  }
  if (partial) out.push_back("(n=k): only k of the row's finished runs have this value.");
  if (incomplete) {
    out.push_back(fmt::format("{}: Avg over the paper's tasks present only (some are missing): "
                              "not comparable with complete rows.", kIncompleteMarker));
  }
  if (t.baseline) baseline_legend(t, out);
  for (const Row& r : t.rows) {
    if (!r.note.empty()) out.push_back(fmt::format("Row {}: {}.", row_label(t, r), r.note));
  }
  for (const std::string& n : t.notes) out.push_back(n + ".");
  return out;
}

}  // namespace attnbench::results
