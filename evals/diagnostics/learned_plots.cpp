#include "evals/diagnostics/learned_plots.h"

#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "results/svg.h"

namespace attnbench::evals::diagnostics {

namespace {
void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f.flush()) throw std::runtime_error("cannot write " + path.string());
}
}  // namespace

std::vector<std::filesystem::path> write_learned_plots(const ModelDiagnostics& d,
                                                       const std::filesystem::path& dir,
                                                       const std::string& title) {
  std::vector<std::filesystem::path> written;
  if (d.tau.empty() && d.distance_bias.empty()) return written;
  std::filesystem::create_directories(dir);
  if (!d.tau.empty()) {
    results::LineChart c;
    const bool per_token = d.tau_stat == "tau_offset_mean";
    c.title = title + (per_token ? ": mean per-token offset g_h(x) per layer" : ": learned tau per layer");
    c.x_label = "layer";
    c.y_label = per_token ? "mean g_h(x)" : "tau_h";
    for (int64_t h = 0; h < d.n_head; ++h) {
      results::Series s{fmt::format("head {}", h), {}, true};
      for (int64_t l = 0; l < d.n_layer; ++l) s.points.emplace_back(double(l), d.tau[l][h]);
      c.series.push_back(std::move(s));
    }
    written.push_back(dir / "tau_per_layer.svg");
    write_text(written.back(), results::render_line_chart(c));
  }
  for (size_t l = 0; l < d.distance_bias.size(); ++l) {
    results::LineChart c;
    c.title = fmt::format("{}: distance bias b[h, r], layer {}", title, l);
    c.x_label = "distance r = i - j";
    c.y_label = "b[h, r]";
    for (size_t h = 0; h < d.distance_bias[l].size(); ++h) {
      results::Series s{fmt::format("head {}", h), {}, false};
      for (size_t r = 0; r < d.distance_bias[l][h].size(); ++r) {
        s.points.emplace_back(double(r), d.distance_bias[l][h][r]);
      }
      c.series.push_back(std::move(s));
    }
    written.push_back(dir / fmt::format("distance_bias_layer{}.svg", l));
    write_text(written.back(), results::render_line_chart(c));
  }
  return written;
}

}  // namespace attnbench::evals::diagnostics
