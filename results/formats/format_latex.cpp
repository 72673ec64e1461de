// `results table --format latex`: a booktabs tabular (\usepackage{booktabs}), best in bold, the
// footnotes as a small paragraph under it.
#include <fmt/format.h>

#include "results/table.h"

namespace attnbench::results {

namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '_': case '%': case '&': case '#': case '$': case '{': case '}':
        out += '\\';
        out += c;
        break;
      case '\\': out += "\\textbackslash{}"; break;
      case '~': out += "\\textasciitilde{}"; break;
      case '^': out += "\\textasciicircum{}"; break;
      default: out += c;
    }
  }
  return out;
}

// ▲ / ▼ in plain LaTeX (no amssymb needed).
const char* kBetterTex = "$^{\\bigtriangleup}$";
const char* kWorseTex = "$^{\\bigtriangledown}$";

// The table's own symbols in LaTeX spelling.
std::string latexify(std::string s) {
  auto replace = [&](const std::string& from, const std::string& to) {
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) {
      s.replace(p, from.size(), to);
    }
  };
  s = escape(s);
  replace("±", "$\\pm$");
  replace("↓", "$\\downarrow$");
  replace("↑", "$\\uparrow$");
  replace(kTieMarker, "$^\\dagger$");
  replace(kOtherScoringMarker, "$^\\ddagger$");
  replace(kBetterMarker, kBetterTex);
  replace(kWorseMarker, kWorseTex);
  replace(kMissing, "---");
  return s;
}

const char* kMissingTex = "---";

std::string cell_text(const Column& col, const Cell& cell, int row_n) {
  if (cell.n == 0) return kMissingTex;
  std::string mean = format_value(col, cell.mean);
  if (cell.best) mean = "\\textbf{" + mean + "}";
  std::string s = mean;
  if (cell.std) s += "{\\scriptsize$\\pm$" + format_value(col, *cell.std) + "}";
  if (cell.within_std_error) s += "$^\\dagger$";
  if (cell.other_scoring) s += "$^\\ddagger$";
  const std::string mark = baseline_marker(cell);
  if (!mark.empty()) s += mark == kBetterMarker ? kBetterTex : kWorseTex;
  if (cell.n < row_n) s += fmt::format("{{\\scriptsize (n={})}}", cell.n);
  return s;
}

std::string render_latex(const ResultTable& t) {
  size_t key_cols = t.row_keys.empty() ? 1 : t.row_keys.size();
  std::string spec(key_cols, 'l');
  spec += std::string(1 + t.columns.size() + (t.has_avg ? 1 : 0), 'r');
  std::string out = "\\begin{tabular}{" + spec + "}\n\\toprule\n";
  std::vector<std::string> header;
  for (const auto& k : t.row_keys) header.push_back(escape(k));
  if (t.row_keys.empty()) header.push_back("sweep");
  header.push_back("$n$");
  for (const Column& c : t.columns) header.push_back(latexify(column_label(c)));
  if (t.has_avg) header.push_back("Avg $\\uparrow$");
  auto join_row = [](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t i = 0; i < cells.size(); ++i) s += (i ? " & " : "") + cells[i];
    return s + " \\\\\n";
  };
  out += join_row(header) + "\\midrule\n";
  const Column avg_column = Column::average();
  for (const Row& r : t.rows) {
    std::vector<std::string> cells;
    for (const auto& v : r.keys) cells.push_back(v.empty() ? kMissingTex : escape(v));
    if (t.row_keys.empty()) cells.push_back(escape(t.sweep));
    if (r.baseline) cells[0] += std::string(" ") + kBaselineLabel;
    cells.push_back(std::to_string(r.n));
    for (size_t c = 0; c < t.columns.size(); ++c) cells.push_back(cell_text(t.columns[c], r.cells[c], r.n));
    if (t.has_avg) {
      if (!r.avg) {
        cells.push_back(kMissingTex);
      } else {
        std::string s = format_value(avg_column, r.avg->mean);
        if (r.avg->std) s += "{\\scriptsize$\\pm$" + format_value(avg_column, *r.avg->std) + "}";
        if (!r.avg->complete()) s += "$^*$";
        cells.push_back(s);
      }
    }
    out += join_row(cells);
  }
  out += "\\bottomrule\n\\end{tabular}\n";
  out += "\\par\\smallskip{\\footnotesize\n";
  for (const auto& note : table_legend(t)) out += latexify(note) + "\\\\\n";
  out += "}\n";
  return out;
}

const RegisterTableFormat kLatex({"latex", "booktabs tabular for a paper", render_latex});

}  // namespace

}  // namespace attnbench::results
