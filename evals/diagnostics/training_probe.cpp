#include "evals/diagnostics/training_probe.h"

#include <fmt/format.h>

#include "evals/diagnostics/model_diagnostics.h"

namespace attnbench::evals::diagnostics {

namespace {

// The mean of each layer's numbers over its heads, as attn/<name>/layer_<l>, then their mean as
// attn/<name>.
void add_per_layer(std::vector<std::pair<std::string, double>>& out, const std::string& name,
                   const std::vector<std::vector<double>>& per_head) {
  double sum = 0;
  for (size_t l = 0; l < per_head.size(); ++l) {
    double layer = 0;
    for (double v : per_head[l]) layer += v;
    layer /= static_cast<double>(per_head[l].size());
    sum += layer;
    out.emplace_back(fmt::format("attn/{}/layer_{:02d}", name, l), layer);
  }
  out.emplace_back("attn/" + name, sum / static_cast<double>(per_head.size()));
}

}  // namespace

std::vector<std::pair<std::string, double>> training_probe(model::CausalLMImpl& model,
                                                           const torch::Tensor& window) {
  const torch::Tensor cpu = window.reshape({-1}).to(torch::kCPU, torch::kInt64).contiguous();
  const std::vector<int64_t> tokens(cpu.data_ptr<int64_t>(), cpu.data_ptr<int64_t>() + cpu.numel());
  DiagnosticsOptions opts;
  opts.window = cpu.numel();
  opts.max_tokens = cpu.numel();
  opts.sink_k.window = cpu.numel();  // Sink_k in the same pass: one forward in all
  const ModelDiagnostics d = measure(model, tokens, opts);

  std::vector<std::pair<std::string, double>> out;
  std::vector<std::vector<double>> sink(d.heads.size());
  for (size_t l = 0; l < d.heads.size(); ++l) {
    for (const HeadStats& h : d.heads[l]) sink[l].push_back(h.sink_mass);
  }
  add_per_layer(out, "sink_mass", sink);
  for (const LearnedValues& s : d.learned) {
    if (s.profile) continue;  // a profile over distances is not one number per head
    std::vector<std::vector<double>> per_head(s.values.size());
    for (size_t l = 0; l < s.values.size(); ++l) {
      for (const auto& head : s.values[l]) per_head[l].push_back(head.at(0));
    }
    add_per_layer(out, s.name, per_head);
  }
  return out;
}

}  // namespace attnbench::evals::diagnostics
