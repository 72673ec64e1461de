#include "evals/diagnostics/model_diagnostics.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace attnbench::evals::diagnostics {

namespace {

// The variant core of layer `l`; its learned parameters are read by name (variants/family.h):
// tau [H], tau_proj.{weight,bias} (per_token), distance_bias [H, W].
variants::AttentionVariantImpl& core_of(model::DecoderLMImpl& m, int64_t l) {
  return *m.blocks->at<model::BlockImpl>(l).attn->core;
}

std::vector<double> to_vector(const torch::Tensor& t) {
  const torch::Tensor c = t.detach().to(torch::kFloat64).cpu().contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

}  // namespace

torch::Tensor diagnostic_windows(const std::vector<int64_t>& tokens, const DiagnosticsOptions& opts) {
  if (opts.window <= 0) throw std::invalid_argument("diagnostic_windows: window must be > 0");
  const int64_t available = std::min<int64_t>(static_cast<int64_t>(tokens.size()), opts.max_tokens);
  if (available <= 0) throw std::invalid_argument("diagnostic_windows: no tokens to measure on");
  const int64_t window = std::min(opts.window, available);
  const int64_t n = available / window;
  torch::Tensor out = torch::from_blob(const_cast<int64_t*>(tokens.data()), {n, window},
                                       torch::kInt64)
                          .clone();
  if (opts.fixed_position >= 0 && opts.fixed_position < window && opts.fixed_token_id >= 0) {
    out.select(1, opts.fixed_position).fill_(opts.fixed_token_id);
  }
  return out;
}

ModelDiagnostics measure(model::DecoderLMImpl& model, const std::vector<int64_t>& tokens,
                         const DiagnosticsOptions& opts_in) {
  torch::NoGradGuard no_grad;
  model.eval();
  DiagnosticsOptions opts = opts_in;
  if (opts.window <= 0) opts.window = model.model_config().context_length;
  if (opts.batch_size <= 0) throw std::invalid_argument("measure: batch_size must be > 0");
  const torch::Tensor windows = diagnostic_windows(tokens, opts);

  ModelDiagnostics d;
  d.n_layer = model.model_config().n_layer;
  d.n_head = model.model_config().n_head;
  d.window = windows.size(1);
  d.windows = windows.size(0);
  d.sink_threshold = opts.sink_threshold;
  d.fixed_position = opts.fixed_position < d.window ? opts.fixed_position : -1;

  std::vector<LayerStatsAccumulator> acc;
  for (int64_t l = 0; l < d.n_layer; ++l) acc.emplace_back(d.n_head, d.fixed_position);

  // The learned offsets: one tau per head, or the per-token map g whose mean over the text is taken.
  std::vector<torch::OrderedDict<std::string, torch::Tensor>> params;
  for (int64_t l = 0; l < d.n_layer; ++l) params.push_back(core_of(model, l).named_parameters(true));
  const bool per_token = params[0].find("tau_proj.weight") != nullptr;
  const bool per_head = params[0].find("tau") != nullptr;
  d.tau_stat = per_token ? "tau_offset_mean" : per_head ? "tau" : "";
  std::vector<torch::Tensor> g_sum;  // one tensor per layer (not copies of one handle: += is in place)
  for (int64_t l = 0; l < d.n_layer; ++l) g_sum.push_back(torch::zeros({d.n_head}, torch::kFloat64));

  const torch::Device device = model.embedding->weight.device();
  for (int64_t start = 0; start < d.windows; start += opts.batch_size) {
    const int64_t b = std::min(opts.batch_size, d.windows - start);
    torch::Tensor h = model.embedding(windows.narrow(0, start, b).to(device));
    for (int64_t l = 0; l < d.n_layer; ++l) {
      auto& block = model.blocks->at<model::BlockImpl>(l);
      if (per_token) {
        // g_h(x_i) on the attention's own input x = RMSNorm(h) (model/decoder.h, block order).
        const torch::Tensor g = torch::nn::functional::linear(
            block.attn_norm(h), params[l]["tau_proj.weight"], params[l]["tau_proj.bias"]);
        g_sum[l] += g.to(torch::kFloat64).sum(torch::IntArrayRef{0, 1}).cpu();
      }
      torch::Tensor w;
      h = block.forward(h, &w);
      if (!w.defined()) throw std::runtime_error("layer " + std::to_string(l) +
                                                 ": the attention variant returned no weights");
      acc[l].add(w);
    }
  }

  const int64_t window_r = d.window;
  for (int64_t l = 0; l < d.n_layer; ++l) {
    d.heads.push_back(acc[l].finish());
    if (per_token) {
      d.tau.push_back(to_vector(g_sum[l] / static_cast<double>(d.windows * d.window)));
    } else if (per_head) {
      d.tau.push_back(to_vector(params[l]["tau"]));
    }
    if (const torch::Tensor* bias = params[l].find("distance_bias")) {
      const int64_t r = std::min(bias->size(1), window_r);
      std::vector<std::vector<double>> rows;
      for (int64_t h = 0; h < bias->size(0); ++h) rows.push_back(to_vector((*bias)[h].narrow(0, 0, r)));
      d.distance_bias.push_back(std::move(rows));
    }
  }
  return d;
}

torch::Tensor attention_map(model::DecoderLMImpl& model, const torch::Tensor& window, int64_t layer,
                            int64_t head) {
  const auto& m = model.model_config();
  if (layer < 0 || layer >= m.n_layer) {
    throw std::invalid_argument("layer " + std::to_string(layer) + " outside [0, " +
                                std::to_string(m.n_layer) + ")");
  }
  if (head < 0 || head >= m.n_head) {
    throw std::invalid_argument("head " + std::to_string(head) + " outside [0, " +
                                std::to_string(m.n_head) + ")");
  }
  torch::NoGradGuard no_grad;
  model.eval();
  std::vector<torch::Tensor> weights;
  model.forward(window.reshape({1, -1}).to(model.embedding->weight.device()), &weights);
  return weights.at(layer)[0][head].to(torch::kFloat32).cpu();
}

std::vector<results::AttnStat> to_attn_stats(const ModelDiagnostics& d) {
  std::vector<results::AttnStat> out;
  auto add_stats = [&](int64_t layer, int64_t head, const HeadStats& s) {
    auto put = [&](const char* stat, double v, int64_t index = -1) {
      out.push_back({layer, head, stat, index, v});
    };
    put("sink_mass", s.sink_mass);
    if (d.fixed_position >= 0) put("fixed_token_mass", s.fixed_token_mass, d.fixed_position);
    put("sparsity", s.sparsity);
    put("row_mass_mean", s.row_mass_mean);
    put("row_mass_min", s.row_mass_min);
    put("row_mass_max", s.row_mass_max);
    if (!std::isnan(s.entropy)) put("entropy", s.entropy);
    put("zero_rows", s.zero_rows);
  };
  std::vector<HeadStats> all;
  for (int64_t l = 0; l < d.n_layer; ++l) {
    for (int64_t h = 0; h < d.n_head; ++h) {
      add_stats(l, h, d.heads[l][h]);
      if (!d.tau.empty()) out.push_back({l, h, d.tau_stat, -1, d.tau[l][h]});
      if (!d.distance_bias.empty()) {
        const auto& b = d.distance_bias[l][h];
        for (size_t r = 0; r < b.size(); ++r) {
          out.push_back({l, h, "distance_bias", static_cast<int64_t>(r), b[r]});
        }
      }
    }
    add_stats(l, -1, mean_over_heads(d.heads[l]));
    out.push_back({l, -1, "sink_rate", -1, sink_rate(d.heads[l], d.sink_threshold)});
    if (!d.tau.empty()) {
      double sum = 0;
      for (double t : d.tau[l]) sum += t;
      out.push_back({l, -1, d.tau_stat, -1, sum / static_cast<double>(d.n_head)});
    }
    all.insert(all.end(), d.heads[l].begin(), d.heads[l].end());
  }
  add_stats(-1, -1, mean_over_heads(all));
  out.push_back({-1, -1, "sink_rate", -1, sink_rate(all, d.sink_threshold)});
  out.push_back({-1, -1, "sink_threshold", -1, d.sink_threshold});
  out.push_back({-1, -1, "tokens", -1, static_cast<double>(d.windows * d.window)});
  return out;
}

}  // namespace attnbench::evals::diagnostics
