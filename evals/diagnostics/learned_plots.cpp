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

// One line per head across the layers: values[layer][head][0].
results::LineChart per_layer_chart(const LearnedValues& v, const std::string& title) {
  results::LineChart c;
  c.title = title + ": " + v.label + " per layer";
  c.x_label = "layer";
  c.y_label = v.name;
  const size_t heads = v.values.empty() ? 0 : v.values[0].size();
  for (size_t h = 0; h < heads; ++h) {
    results::Series s{fmt::format("head {}", h), {}, true};
    for (size_t l = 0; l < v.values.size(); ++l) s.points.emplace_back(double(l), v.values[l][h][0]);
    c.series.push_back(std::move(s));
  }
  return c;
}

// One layer's profiles, one line per head over the index r: values[layer][head][r].
results::LineChart profile_chart(const LearnedValues& v, size_t layer, const std::string& title) {
  results::LineChart c;
  c.title = fmt::format("{}: {}, layer {}", title, v.label, layer);
  c.x_label = "r";
  c.y_label = v.name;
  for (size_t h = 0; h < v.values[layer].size(); ++h) {
    results::Series s{fmt::format("head {}", h), {}, false};
    const auto& profile = v.values[layer][h];
    for (size_t r = 0; r < profile.size(); ++r) s.points.emplace_back(double(r), profile[r]);
    c.series.push_back(std::move(s));
  }
  return c;
}

}  // namespace

std::vector<std::filesystem::path> write_learned_plots(const ModelDiagnostics& d,
                                                       const std::filesystem::path& dir,
                                                       const std::string& title) {
  std::vector<std::filesystem::path> written;
  auto write = [&](const std::string& file, const results::LineChart& chart) {
    std::filesystem::create_directories(dir);
    written.push_back(dir / file);
    write_text(written.back(), results::render_line_chart(chart));
  };
  for (const LearnedValues& v : d.learned) {
    if (!v.profile) {
      write(v.name + "_per_layer.svg", per_layer_chart(v, title));
      continue;
    }
    for (size_t l = 0; l < v.values.size(); ++l) {
      write(fmt::format("{}_layer{}.svg", v.name, l), profile_chart(v, l, title));
    }
  }
  return written;
}

}  // namespace attnbench::evals::diagnostics
