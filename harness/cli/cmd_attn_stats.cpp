// `attnbench attn-stats`: attention diagnostics of a checkpoint on held-out text
// (docs/diagnostics.md): per layer and head sink mass, sparsity, surviving row mass,
// entropy, and whatever the attention variant learns (tau, distance bias, ...); the published
// metrics (Gu et al.'s Sink_k, massive activations, collapse, non-zero ratio); optionally a
// heatmap PNG of one layer and head and SVG plots of the learned parameters. With --db (or $ATTNBENCH_DB) the statistics go to the store's
// attn_stats table under the run id config::config_hash of the checkpoint's config.
#include <torch/torch.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/common/output_path.h"
#include "core/config/run_config.h"
#include "evals/scored_model.h"
#include "evals/diagnostics/heatmap_png.h"
#include "evals/diagnostics/learned_plots.h"
#include "evals/diagnostics/model_diagnostics.h"
#include "evals/diagnostics/text_source.h"
#include "harness/cli/command.h"
#include "harness/cli/runtime.h"
#include "harness/cli/standalone_run.h"
#include "results/store.h"

namespace attnbench::cli::cmd_attn_stats {
namespace {

namespace dx = evals::diagnostics;

struct Options {
  std::string checkpoint;
  dx::TextSource source;
  int64_t tokens = 8192;
  int64_t window = 0;
  int64_t batch_size = 4;
  double sink_threshold = 0.3;
  std::string format = "table";
  std::string db;
  int64_t heatmap_layer = 0, heatmap_head = 0, heatmap_tokens = 64;
  std::string heatmap_out;
  std::string plots;
  int threads = 0;
  std::string device;  // "" = the checkpoint config's train.device
  std::string data_dir;
};

nlohmann::json stats_json(const dx::HeadStats& s, bool fixed) {
  auto num = [](double v) { return std::isnan(v) ? nlohmann::json() : nlohmann::json(v); };
  nlohmann::json j = {{"sink_mass", s.sink_mass},         {"sparsity", s.sparsity},
                      {"nonzero_ratio", s.nonzero_ratio},
                      {"row_mass_mean", s.row_mass_mean}, {"row_mass_min", s.row_mass_min},
                      {"row_mass_max", s.row_mass_max},   {"entropy", num(s.entropy)},
                      {"zero_rows", s.zero_rows}};
  if (fixed) j["fixed_token_mass"] = s.fixed_token_mass;
  return j;
}

// What the variant learns, as the per-head entries name it: [{name, label, profile}].
nlohmann::json learned_json(const dx::ModelDiagnostics& d) {
  nlohmann::json out = nlohmann::json::array();
  for (const dx::LearnedValues& v : d.learned) {
    out.push_back({{"name", v.name}, {"label", v.label}, {"profile", v.profile}});
  }
  return out;
}

nlohmann::json num_json(double v) { return std::isnan(v) ? nlohmann::json() : nlohmann::json(v); }

nlohmann::json nums_json(const std::vector<double>& v) {
  nlohmann::json out = nlohmann::json::array();
  for (double x : v) out.push_back(num_json(x));
  return out;
}

nlohmann::json hidden_json(const dx::HiddenStats& h) {
  return {{"massive_activations", h.massive_activations},
          {"top_activation", nums_json({h.top_activation.begin(), h.top_activation.end()})},
          {"median_activation", num_json(h.median_activation)},
          {"kurtosis", num_json(h.kurtosis)},
          {"mean_cosine", num_json(h.mean_cosine)},
          {"effective_rank", num_json(h.effective_rank)}};
}

// Gu et al.'s Sink_k, k = 1..K as arrays indexed k - 1.
nlohmann::json sink_k_json(const dx::SinkK& s) {
  return {{"window", s.window},           {"windows", s.windows},
          {"epsilon", s.epsilon},         {"sink_k", nums_json(s.sink)},
          {"alpha_k", nums_json(s.alpha)}, {"alpha_k_uniform", nums_json(s.alpha_uniform)}};
}

nlohmann::json to_json(const dx::ModelDiagnostics& d, const std::string& run_id, int64_t step,
                       const std::string& text) {
  const bool fixed = d.fixed_position >= 0;
  std::vector<dx::HeadStats> all;
  nlohmann::json layers = nlohmann::json::array();
  for (int64_t l = 0; l < d.n_layer; ++l) {
    nlohmann::json heads = nlohmann::json::array();
    for (int64_t h = 0; h < d.n_head; ++h) {
      nlohmann::json j = stats_json(d.heads[l][h], fixed);
      j["head"] = h;
      for (const dx::LearnedValues& v : d.learned) {
        const std::vector<double>& x = v.values[l][h];
        j[v.name] = v.profile ? nlohmann::json(x) : nlohmann::json(x.at(0));
      }
      heads.push_back(j);
    }
    layers.push_back({{"layer", l},
                      {"sink_rate", dx::sink_rate(d.heads[l], d.sink_threshold)},
                      {"mean", stats_json(dx::mean_over_heads(d.heads[l]), fixed)},
                      {"hidden", hidden_json(d.hidden[l])},
                      {"sink_k", nums_json(d.sink_k.layer_sink[l])},
                      {"alpha_k", nums_json(d.sink_k.layer_alpha[l])},
                      {"heads", heads}});
    all.insert(all.end(), d.heads[l].begin(), d.heads[l].end());
  }
  nlohmann::json model = stats_json(dx::mean_over_heads(all), fixed);
  model["sink_rate"] = dx::sink_rate(all, d.sink_threshold);
  model["sink_mass_uniform"] = dx::uniform_alpha(d.window, 1);
  return {{"run_id", run_id},
          {"step", step},
          {"text", text},
          {"window", d.window},
          {"windows", d.windows},
          {"sink_threshold", d.sink_threshold},
          {"fixed_token_position", d.fixed_position >= 0 ? nlohmann::json(d.fixed_position) : nlohmann::json()},
          {"learned", learned_json(d)},
          {"sink_k", sink_k_json(d.sink_k)},
          {"model", model},
          {"layers", layers}};
}

std::string num(double v) { return std::isnan(v) ? "-" : fmt::format("{:.4f}", v); }

// The learned per-head numbers (not profiles) as extra table columns, named by their statistic.
std::vector<const dx::LearnedValues*> per_head_learned(const dx::ModelDiagnostics& d) {
  std::vector<const dx::LearnedValues*> out;
  for (const dx::LearnedValues& v : d.learned) {
    if (!v.profile) out.push_back(&v);
  }
  return out;
}

// The published metrics (docs/diagnostics.md, "Published metrics") below the per-head table.
void print_published(const dx::ModelDiagnostics& d, const dx::HeadStats& model) {
  const dx::SinkK& g = d.sink_k;
  fmt::print("first-token mass {} (uniform attention: {})\n", num(model.sink_mass),
             num(dx::uniform_alpha(d.window, 1)));
  fmt::print("Sink_k (Gu et al.: share of (window, layer, head) with alpha_k > {}; {} windows of {} tokens)\n",
             g.epsilon, g.windows, g.window);
  fmt::print("{:>5} {:>9} {:>9} {:>9}\n", "k", "sink_k", "alpha_k", "uniform");
  for (int64_t k = 1; k <= g.keys; ++k) {
    fmt::print("{:>5} {:>9} {:>9} {:>9}\n", k, num(g.sink[k - 1]), num(g.alpha[k - 1]),
               num(g.alpha_uniform[k - 1]));
  }
  fmt::print("hidden states after each block (massive: |h| > {} and > {}x the window's median |h|)\n",
             dx::kMassiveAbsolute, dx::kMassiveOverMedian);
  fmt::print("{:>5} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "layer", "massive", "top1", "top2",
             "top3", "median", "kurtosis", "cosine", "eff_rank");
  for (size_t l = 0; l < d.hidden.size(); ++l) {
    const dx::HiddenStats& h = d.hidden[l];
    fmt::print("{:>5} {:>9} {:>9.4g} {:>9.4g} {:>9.4g} {:>9.4g} {:>9} {:>9} {:>9}\n", l,
               num(h.massive_activations), h.top_activation[0], h.top_activation[1], h.top_activation[2],
               h.median_activation, num(h.kurtosis), num(h.mean_cosine), num(h.effective_rank));
  }
}

void print_table(const dx::ModelDiagnostics& d, const std::string& run_id, int64_t step,
                 const std::string& text) {
  const bool fixed = d.fixed_position >= 0;
  const auto learned = per_head_learned(d);
  std::string learned_header;
  for (const auto* v : learned) learned_header += fmt::format(" {:>9}", v->name);
  fmt::print("run {} step {}: {} windows of {} tokens from {}\n", run_id, step, d.windows, d.window, text);
  fmt::print("{:>5} {:>4} {:>9}{} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}{}\n", "layer", "head", "sink",
             fixed ? fmt::format(" {:>9}", fmt::format("mass@{}", d.fixed_position)) : "", "sparsity",
             "nonzero", "entropy", "mass", "mass_min", "mass_max", "zero_rows", learned_header);
  auto line = [&](const std::string& layer, const std::string& head, const dx::HeadStats& s,
                  const std::vector<double>& extra) {
    std::string cells;
    for (double x : extra) cells += fmt::format(" {:>9}", num(x));
    fmt::print("{:>5} {:>4} {:>9}{} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}{}\n", layer, head,
               num(s.sink_mass), fixed ? " " + fmt::format("{:>9}", num(s.fixed_token_mass)) : "",
               num(s.sparsity), num(s.nonzero_ratio), num(s.entropy), num(s.row_mass_mean), num(s.row_mass_min),
               num(s.row_mass_max), num(s.zero_rows), cells);
  };
  std::vector<dx::HeadStats> all;
  for (int64_t l = 0; l < d.n_layer; ++l) {
    std::vector<double> sums(learned.size(), 0.0);
    for (int64_t h = 0; h < d.n_head; ++h) {
      std::vector<double> extra;
      for (size_t i = 0; i < learned.size(); ++i) {
        extra.push_back(learned[i]->values[l][h].at(0));
        sums[i] += extra.back();
      }
      line(std::to_string(l), std::to_string(h), d.heads[l][h], extra);
    }
    for (double& x : sums) x /= static_cast<double>(d.n_head);
    line(std::to_string(l), "all", dx::mean_over_heads(d.heads[l]), sums);
    all.insert(all.end(), d.heads[l].begin(), d.heads[l].end());
  }
  line("all", "all", dx::mean_over_heads(all), {});
  fmt::print("sink rate (heads with sink mass > {}): {:.4f} ({} of {} heads)\n", d.sink_threshold,
             dx::sink_rate(all, d.sink_threshold),
             static_cast<int64_t>(std::lround(dx::sink_rate(all, d.sink_threshold) * double(all.size()))),
             all.size());
  print_published(d, dx::mean_over_heads(all));
}

// The options that depend on the model, checked before anything is measured.
void check_against_model(const Options& o, const evals::ScoredModel& scored, const model::LMShape& m) {
  if (!o.heatmap_out.empty() &&
      (o.heatmap_layer < 0 || o.heatmap_layer >= m.n_layer || o.heatmap_head < 0 || o.heatmap_head >= m.n_head)) {
    throw UsageError(fmt::format("--heatmap-layer {} --heatmap-head {}: the model has layers 0..{} and "
                                 "heads 0..{}", o.heatmap_layer, o.heatmap_head, m.n_layer - 1, m.n_head - 1));
  }
  if (!o.source.text_file.empty()) evals::require_text(scored, "attn-stats --text");
  // Beyond the training context is length extrapolation, where the positions allow it.
  const int64_t window = model::scoring_length(m, o.window, "--window");
  const bool stored = !o.db.empty() || std::getenv("ATTNBENCH_DB") != nullptr;
  if (window > m.context_length && stored) {
    throw UsageError(fmt::format("--window {} is beyond the training context ({}): the store keeps "
                                 "the statistics measured within it; leave out --db (and unset "
                                 "ATTNBENCH_DB) to measure at this length",
                                 window, m.context_length));
  }
}

dx::DiagnosticsOptions diagnostics_options(const Options& o, const evals::ScoredModel& scored,
                                           const model::LMShape& m) {
  dx::DiagnosticsOptions opts;
  opts.window = o.window > 0 ? o.window : m.context_length;
  opts.max_tokens = o.tokens;
  opts.batch_size = o.batch_size;
  opts.sink_threshold = o.sink_threshold;
  // Mask@k runs are measured as they were trained: the fixed token sits at position k of every window.
  opts.fixed_position = scored.cfg ? scored.cfg->data.fixed_token_position : -1;
  opts.fixed_token_id = scored.cfg ? scored.cfg->data.fixed_token_id : -1;
  return opts;
}

// --heatmap-out: the attention map of one layer and head on the first window of the text.
void write_heatmap(const Options& o, const evals::ScoredModel& scored, const dx::HeldOutTokens& text,
                   const dx::DiagnosticsOptions& opts) {
  dx::DiagnosticsOptions hm = opts;
  hm.window = std::min(o.heatmap_tokens, scored.model->shape().context_length);
  hm.max_tokens = hm.window;
  const torch::Tensor window = dx::diagnostic_windows(text.tokens, hm)[0];
  const torch::Tensor a = dx::attention_map(*scored.model, window, o.heatmap_layer, o.heatmap_head).contiguous();
  dx::write_heatmap_png(o.heatmap_out, std::vector<float>(a.data_ptr<float>(), a.data_ptr<float>() + a.numel()),
                        a.size(0));
  std::cerr << "heatmap: " << o.heatmap_out << "\n";
}

int run(const Options& o) {
  if (o.format != "table" && o.format != "json") {
    throw UsageError("--format " + o.format + ": expected table or json" +
                     did_you_mean(o.format, {"table", "json"}));
  }
  const int threads = init_threads(o.threads);
  const evals::ScoredModel scored = evals::load_scored_model(o.checkpoint, o.device, "--device", o.data_dir);
  const model::LMShape m = scored.model->shape();
  check_against_model(o, scored, m);
  const bool want_store = !o.db.empty() || std::getenv("ATTNBENCH_DB") != nullptr;
  const std::filesystem::path db = want_store ? results::default_db_path(o.db) : "";
  const std::vector<NamedPath> inputs = {{"the checkpoint", scored.source},
                                         {"--text", o.source.text_file},
                                         {"--data", o.source.shard},
                                         {"--db", db}};
  if (!o.heatmap_out.empty()) refuse_output_over_inputs({"--heatmap-out", o.heatmap_out}, inputs);
  if (!o.plots.empty()) refuse_output_over_inputs({"--plots", o.plots}, inputs);
  std::unique_ptr<results::Store> store;
  if (want_store) store = std::make_unique<results::Store>(results::Store::open(db));

  const dx::HeldOutTokens text = dx::read_held_out(o.source, scored, o.tokens);
  const dx::DiagnosticsOptions opts = diagnostics_options(o, scored, m);
  const dx::ModelDiagnostics d = dx::measure(*scored.model, text.tokens, opts);

  if (o.format == "json") {
    std::cout << to_json(d, scored.run_id, scored.step, text.description).dump(2) << "\n";
  } else {
    print_table(d, scored.run_id, scored.step, text.description);
  }
  if (!o.heatmap_out.empty()) write_heatmap(o, scored, text, opts);
  if (!o.plots.empty()) {
    const std::string what = scored.cfg ? scored.cfg->attention.variant : scored.pretrained->name;
    for (const auto& f : dx::write_learned_plots(d, o.plots, what + " " + scored.run_id)) {
      std::cerr << "plot: " << f.string() << "\n";
    }
  }
  if (store) {
    ensure_standalone_run(*store, scored, threads);
    store->record_attn_stats(scored.run_id, dx::to_attn_stats(d),
                             dx::measurement(text, d.window, d.windows));
    std::cerr << "attn_stats of run " << scored.run_id << " stored in " << store->path().string() << "\n";
  }
  return 0;
}

RegisterCommand reg("attn-stats", "Attention diagnostics of a checkpoint (sink, sparsity, learned parameters, heatmaps)",
                    [](CLI::App& app) {
  auto o = std::make_shared<Options>();
  app.add_option("--checkpoint", o->checkpoint,
                 "Run folder, checkpoint folder or Hugging Face model folder")
      ->required();
  auto* text = app.add_option("--text", o->source.text_file,
                              "Held-out text file, read with the model's tokenizer");
  auto* data = app.add_option("--data", o->source.shard,
                              "Held-out llm.c shard(s): file, folder or glob (default: the run's data.val)");
  text->excludes(data);
  app.add_option("--tokens", o->tokens, "Tokens read from the text (whole windows)")
      ->check(int_in(1))
      ->capture_default_str();
  app.add_option("--window", o->window, "Tokens per window (0 = the model's context length)")
      ->check(int_in(0))
      ->capture_default_str();
  app.add_option("--batch-size", o->batch_size, "Windows per forward pass")
      ->check(int_in(1))
      ->capture_default_str();
  app.add_option("--sink-threshold", o->sink_threshold, "Sink rate: heads whose sink mass exceeds it")
      ->check(finite_in(0, 1))
      ->capture_default_str();
  app.add_option("--format", o->format, "table | json")->capture_default_str();
  app.add_option("--db", o->db, "Results database (default $ATTNBENCH_DB; none = not stored)");
  app.add_option("--heatmap-layer", o->heatmap_layer, "Heatmap layer")
      ->check(int_in(0))
      ->capture_default_str();
  app.add_option("--heatmap-head", o->heatmap_head, "Heatmap head")
      ->check(int_in(0))
      ->capture_default_str();
  app.add_option("--heatmap-tokens", o->heatmap_tokens, "Heatmap size (first N tokens of the text)")
      ->check(int_in(1))
      ->capture_default_str();
  app.add_option("--heatmap-out", o->heatmap_out, "Write the heatmap PNG here");
  app.add_option("--plots", o->plots, "Write SVG plots of the learned attention parameters into this folder");
  app.add_option("--data-dir", o->data_dir,
                 "Data root with gpt2_tokenizer/ (--text on attnbench's checkpoints)");
  app.add_option("--threads", o->threads, "Intra-op threads (0 = $OMP_NUM_THREADS or all cores)")
      ->check(int_in(0, std::numeric_limits<int>::max()));
  app.add_option("--device", o->device,
                 "auto | cpu | cuda (default: the checkpoint config's train.device; cpu for a "
                 "Hugging Face folder)");
  refuse_empty_values(app);
  return [o] { return run(*o); };
});

}  // namespace
}  // namespace attnbench::cli::cmd_attn_stats
