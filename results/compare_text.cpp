// `results compare`'s text rendering (results/compare.h render_comparison_text): one block per row
// under its label, one line per test, fitting a 100-column terminal; csv and json carry every field.
#include <cmath>

#include <fmt/format.h>

#include "results/compare.h"

namespace attnbench::results {

namespace {

// The test's name without its sidedness and unit, which the legend under the lines gives.
std::string short_test(const std::string& test) {
  if (test == kBootstrapTest) return "bootstrap";
  if (test == kMcNemarTest) return "McNemar";
  if (test == kWelchTest) return "Welch";
  return test;
}

std::string number(double v, const char* spec) {
  return std::isfinite(v) ? fmt::format(fmt::runtime(spec), v) : std::string("—");
}

// A difference with its sign, "0" when there is none ("+0" read as a positive difference).
std::string signed_diff(double v) { return v == 0 ? std::string("0") : number(v, "{:+.4g}"); }

}  // namespace

std::string render_comparison_text(const Comparison& c, bool details) {
  if (c.lines.empty()) return "no differences to test\n";
  std::string out;
  std::string label;
  for (size_t i = 0; i < c.lines.size(); ++i) {
    const ComparisonLine& l = c.lines[i];
    const std::string row = c.grid.rows[i][0].get<std::string>();
    if (row != label) {
      label = row;
      out += fmt::format("{}{}\n  {:<15} {:<18} {:<10} {:<22} {:>10} {:>9} {:>8}\n", out.empty() ? "" : "\n",
                         label, "task", "metric", "test", "n", "diff", "se", "p");
    }
    out += fmt::format("  {:<15} {:<18} {:<10} {:<22} {:>10} {:>9} {:>8}\n", l.task, l.metric,
                       short_test(l.test), l.n, signed_diff(l.diff), number(l.se, "{:.2g}"),
                       number(l.p, "{:.2g}"));
    if (details) {
      out += fmt::format("      baseline {}, row {}, unpaired se {}; {}\n", number(l.baseline, "{:.6g}"),
                         number(l.value, "{:.6g}"), number(l.unpaired_se, "{:.2g}"), l.detail);
    }
  }
  out += fmt::format("\ntests: bootstrap = {}; McNemar = {};\n       Welch = {}. diff = row - "
                     "baseline.\n--details: the values, unpaired se and each test's detail; csv and "
                     "json: every field.\n", kBootstrapTest, kMcNemarTest, kWelchTest);
  return out;
}

}  // namespace attnbench::results
