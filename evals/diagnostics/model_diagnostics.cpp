#include "evals/diagnostics/model_diagnostics.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

namespace attnbench::evals::diagnostics {

namespace {

using Kind = variants::LearnedStatistic::Kind;

std::vector<double> to_vector(const torch::Tensor& t) {
  const torch::Tensor c = t.detach().to(torch::kFloat64).cpu().contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

// One layer's learned statistics over the text: per-head numbers and profiles as the first batch
// gives them (they do not depend on the input), per-token values summed over every batch's tokens
// (float64) and divided by the token count at the end.
struct LearnedAccumulator {
  std::vector<variants::LearnedStatistic> stats;
  std::vector<torch::Tensor> token_sums;  // [H] float64 per statistic (undefined unless TokenMean)

  void add(std::vector<variants::LearnedStatistic> batch) {
    if (stats.empty() && !batch.empty()) {
      stats = std::move(batch);
      for (auto& s : stats) {
        token_sums.push_back(s.kind == Kind::TokenMean
                                 ? torch::zeros({s.values.size(2)}, torch::kFloat64)
                                 : torch::Tensor());
      }
      batch = stats;
    }
    for (size_t i = 0; i < stats.size(); ++i) {
      if (stats[i].kind != Kind::TokenMean) continue;
      token_sums[i] += batch.at(i).values.to(torch::kFloat64).sum(torch::IntArrayRef{0, 1}).cpu();
    }
  }

  // [head][r] of statistic i (one entry per head unless a profile).
  std::vector<std::vector<double>> finish(size_t i, int64_t tokens) const {
    std::vector<std::vector<double>> rows;
    const torch::Tensor v = stats[i].kind == Kind::TokenMean
                                ? token_sums[i] / static_cast<double>(tokens)
                                : stats[i].values;
    for (int64_t h = 0; h < v.size(0); ++h) rows.push_back(to_vector(v[h]));
    return rows;
  }
};

// The statistics of every layer, by statistic; every layer must list the same ones.
std::vector<LearnedValues> collect(const std::vector<LearnedAccumulator>& acc, int64_t tokens) {
  std::vector<LearnedValues> out;
  for (const auto& s : acc.at(0).stats) out.push_back({s.name, s.label, s.kind == Kind::Profile, {}});
  for (size_t l = 0; l < acc.size(); ++l) {
    if (acc[l].stats.size() != out.size()) {
      throw std::runtime_error("layer " + std::to_string(l) + " reports " +
                               std::to_string(acc[l].stats.size()) + " learned statistics, layer 0 " +
                               std::to_string(out.size()));
    }
    for (size_t i = 0; i < out.size(); ++i) out[i].values.push_back(acc[l].finish(i, tokens));
  }
  return out;
}

// Gu et al.'s Sink_k on the text cut again, into windows of opts.sink_k.window tokens (their
// T = 64, shorter than the main windows), with the same tokens per forward pass as the main
// measurement.
// Between two batches of windows: the caller's progress, then its stop request.
void after_batch(const DiagnosticsOptions& opts, int64_t done, int64_t total) {
  if (opts.progress) opts.progress(done, total);
  if (opts.stop && opts.stop()) throw Stopped{};
}

SinkK measure_sink_k(model::CausalLMImpl& model, const std::vector<int64_t>& tokens,
                     const DiagnosticsOptions& opts, int64_t main_window) {
  DiagnosticsOptions cut = opts;
  cut.window = opts.sink_k.window;
  const torch::Tensor windows = diagnostic_windows(tokens, cut);
  const int64_t T = windows.size(1);
  const int64_t batch = opts.batch_size * std::max<int64_t>(1, main_window / T);
  SinkKAccumulator acc(model.shape().n_layer, std::min(opts.sink_k.keys, T), opts.sink_k.epsilon);
  const torch::Device device = model.device();
  for (int64_t start = 0; start < windows.size(0); start += batch) {
    const int64_t b = std::min(batch, windows.size(0) - start);
    const std::vector<torch::Tensor> weights =
        model.attention_weights(windows.narrow(0, start, b).to(device));
    for (size_t l = 0; l < weights.size(); ++l) acc.add(static_cast<int64_t>(l), weights[l]);
    after_batch(opts, start + b, windows.size(0));
  }
  return acc.finish();
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

ModelDiagnostics measure(model::CausalLMImpl& model, const std::vector<int64_t>& tokens,
                         const DiagnosticsOptions& opts_in) {
  torch::NoGradGuard no_grad;
  model.eval();
  const model::LMShape shape = model.shape();
  DiagnosticsOptions opts = opts_in;
  if (opts.window <= 0) opts.window = shape.context_length;
  if (opts.batch_size <= 0) throw std::invalid_argument("measure: batch_size must be > 0");
  const torch::Tensor windows = diagnostic_windows(tokens, opts);

  ModelDiagnostics d;
  d.n_layer = shape.n_layer;
  d.n_head = shape.n_head;
  d.window = windows.size(1);
  d.windows = windows.size(0);
  d.sink_threshold = opts.sink_threshold;
  d.fixed_position = opts.fixed_position < d.window ? opts.fixed_position : -1;

  std::vector<LayerStatsAccumulator> acc;
  for (int64_t l = 0; l < d.n_layer; ++l) acc.emplace_back(d.n_head, d.fixed_position);

  // The attention's learned statistics, measured on each layer's input (model/causal_lm.h).
  std::vector<LearnedAccumulator> learned(d.n_layer);
  std::vector<HiddenStateAccumulator> hidden(d.n_layer);
  // Windows no longer than Sink_k's T are already its windows: measured in this pass, not again.
  std::optional<SinkKAccumulator> sink_k;
  if (opts.sink_k.window >= d.window)
    sink_k.emplace(d.n_layer, std::min(opts.sink_k.keys, d.window), opts.sink_k.epsilon);

  const torch::Device device = model.device();
  for (int64_t start = 0; start < d.windows; start += opts.batch_size) {
    const int64_t b = std::min(opts.batch_size, d.windows - start);
    torch::Tensor h = model.embed(windows.narrow(0, start, b).to(device));
    for (int64_t l = 0; l < d.n_layer; ++l) {
      learned[l].add(model.learned(l, h));
      torch::Tensor w;
      h = model.layer(l, h, &w);
      if (!w.defined()) throw std::runtime_error("layer " + std::to_string(l) +
                                                 ": the attention variant returned no weights");
      acc[l].add(w);
      hidden[l].add(h);
      if (sink_k) sink_k->add(l, w);
    }
    after_batch(opts, start + b, d.windows);
  }

  for (int64_t l = 0; l < d.n_layer; ++l) {
    d.heads.push_back(acc[l].finish());
    d.hidden.push_back(hidden[l].finish());
  }
  d.learned = collect(learned, d.windows * d.window);
  d.sink_k = sink_k ? sink_k->finish() : measure_sink_k(model, tokens, opts, d.window);
  return d;
}

torch::Tensor attention_map(model::CausalLMImpl& model, const torch::Tensor& window, int64_t layer,
                            int64_t head) {
  const model::LMShape m = model.shape();
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
  const std::vector<torch::Tensor> weights =
      model.attention_weights(window.reshape({1, -1}).to(model.device()));
  return weights.at(layer)[0][head].to(torch::kFloat32).cpu();
}

namespace {

// One layer's hidden-state statistics (head -1).
void add_hidden(std::vector<results::AttnStat>& out, int64_t layer, const HiddenStats& s) {
  out.push_back({layer, -1, "massive_activations", -1, s.massive_activations});
  for (size_t r = 0; r < s.top_activation.size(); ++r) {
    out.push_back({layer, -1, "top_activation", static_cast<int64_t>(r + 1), s.top_activation[r]});
  }
  out.push_back({layer, -1, "median_activation", -1, s.median_activation});
  out.push_back({layer, -1, "kurtosis", -1, s.kurtosis});
  out.push_back({layer, -1, "mean_cosine", -1, s.mean_cosine});
  out.push_back({layer, -1, "effective_rank", -1, s.effective_rank});
}

// The model-level rows of the published metrics (docs/diagnostics.md, "Published metrics").
void add_model_level(std::vector<results::AttnStat>& out, const ModelDiagnostics& d) {
  // First-token mass under uniform attention over the same rows: mean_i 1/n_i.
  out.push_back({-1, -1, "sink_mass_uniform", -1, uniform_alpha(d.window, 1)});
  double massive = 0, kurtosis = 0, cosine = 0, rank = 0;
  for (const HiddenStats& h : d.hidden) {
    massive += h.massive_activations;
    kurtosis += h.kurtosis;
    cosine += h.mean_cosine;
    rank += h.effective_rank;
  }
  const double layers = static_cast<double>(d.hidden.size());
  out.push_back({-1, -1, "massive_activations", -1, massive});
  out.push_back({-1, -1, "kurtosis", -1, kurtosis / layers});
  out.push_back({-1, -1, "mean_cosine", -1, cosine / layers});
  out.push_back({-1, -1, "effective_rank", -1, rank / layers});
  for (int64_t k = 1; k <= d.sink_k.keys; ++k) {
    out.push_back({-1, -1, "sink_k", k, d.sink_k.sink[k - 1]});
    out.push_back({-1, -1, "alpha_k", k, d.sink_k.alpha[k - 1]});
    out.push_back({-1, -1, "alpha_k_uniform", k, d.sink_k.alpha_uniform[k - 1]});
  }
  out.push_back({-1, -1, "sink_k_window", -1, static_cast<double>(d.sink_k.window)});
  out.push_back({-1, -1, "sink_k_epsilon", -1, d.sink_k.epsilon});
}

// A variant's learned statistic, stored as such (the report draws it as a learned parameter).
results::AttnStat learned_stat(int64_t layer, int64_t head, const std::string& name, int64_t index,
                               double value) {
  results::AttnStat a;
  a.layer = layer;
  a.head = head;
  a.stat = name;
  a.index = index;
  a.value = value;
  a.learned = true;
  return a;
}

}  // namespace

std::vector<results::AttnStat> to_attn_stats(const ModelDiagnostics& d) {
  std::vector<results::AttnStat> out;
  auto add_stats = [&](int64_t layer, int64_t head, const HeadStats& s) {
    auto put = [&](const char* stat, double v, int64_t index = -1) {
      out.push_back({layer, head, stat, index, v});
    };
    put("sink_mass", s.sink_mass);
    if (d.fixed_position >= 0) put("fixed_token_mass", s.fixed_token_mass, d.fixed_position);
    put("sparsity", s.sparsity);
    put("nonzero_ratio", s.nonzero_ratio);
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
      for (const auto& s : d.learned) {
        const auto& v = s.values[l][h];
        if (!s.profile) {
          out.push_back(learned_stat(l, h, s.name, -1, v.at(0)));
          continue;
        }
        for (size_t r = 0; r < v.size(); ++r) {
          out.push_back(learned_stat(l, h, s.name, static_cast<int64_t>(r), v[r]));
        }
      }
    }
    add_stats(l, -1, mean_over_heads(d.heads[l]));
    out.push_back({l, -1, "sink_rate", -1, sink_rate(d.heads[l], d.sink_threshold)});
    add_hidden(out, l, d.hidden[l]);
    for (int64_t k = 1; k <= d.sink_k.keys; ++k) {
      out.push_back({l, -1, "sink_k", k, d.sink_k.layer_sink[l][k - 1]});
      out.push_back({l, -1, "alpha_k", k, d.sink_k.layer_alpha[l][k - 1]});
    }
    for (const auto& s : d.learned) {  // per-head numbers: the layer's mean over its heads
      if (s.profile) continue;
      double sum = 0;
      for (const auto& head : s.values[l]) sum += head.at(0);
      out.push_back(learned_stat(l, -1, s.name, -1, sum / static_cast<double>(d.n_head)));
    }
    all.insert(all.end(), d.heads[l].begin(), d.heads[l].end());
  }
  add_stats(-1, -1, mean_over_heads(all));
  out.push_back({-1, -1, "sink_rate", -1, sink_rate(all, d.sink_threshold)});
  out.push_back({-1, -1, "sink_threshold", -1, d.sink_threshold});
  out.push_back({-1, -1, "tokens", -1, static_cast<double>(d.windows * d.window)});
  add_model_level(out, d);
  return out;
}

}  // namespace attnbench::evals::diagnostics
