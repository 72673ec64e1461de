// Attention diagnostics of a decoder model on held-out tokens (docs/diagnostics.md): per layer and
// head the statistics of attention_stats.h and whatever learned statistics the attention variant
// exposes (variants/variant.h, learned(): e.g. tau per head, the mean per-token offset g_h(x) over
// the text, the distance-bias profiles b[h, r]); and their conversion to the store's attn_stats
// rows, with layer summaries (head = -1) and model summaries (layer = head = -1) for the sweep
// table.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "evals/diagnostics/attention_stats.h"
#include "evals/diagnostics/hidden_state_stats.h"
#include "evals/diagnostics/sink_k.h"
#include "model/causal_lm.h"
#include "results/rows.h"

namespace attnbench::evals::diagnostics {

struct DiagnosticsOptions {
  int64_t window = 0;             // tokens per window; 0 = the model's context_length
  int64_t max_tokens = 8192;      // tokens read from the text (whole windows; at least one window)
  int64_t batch_size = 4;         // windows per forward pass
  double sink_threshold = 0.3;    // sink rate: heads whose sink mass exceeds it
  int64_t fixed_position = -1;    // Mask@k: position k of every window ...
  int64_t fixed_token_id = 0;     // ... gets this token (as in training); -1 = off
  SinkKOptions sink_k;            // Gu et al.'s Sink_k, on windows of sink_k.window tokens
  // Asked after every batch of windows: true stops the measurement (measure throws Stopped), so a
  // sweep's SIGTERM is honoured within one batch. Unset: never stops.
  std::function<bool()> stop;
  // Told after every batch: (windows measured, windows in all) of the pass under way (the main
  // pass, then Sink_k's own when its windows are shorter). Unset: silent.
  std::function<void(int64_t done, int64_t total)> progress;
};

// Thrown by measure when DiagnosticsOptions::stop asked it to stop: nothing was measured.
struct Stopped {};

// One learned statistic of every layer (variants::LearnedStatistic, measured).
struct LearnedValues {
  std::string name;      // the attn_stats name, e.g. "tau"
  std::string label;     // for people, e.g. "learned tau_h"
  bool profile = false;  // values[layer][head] is a profile over r; else it holds one number
  std::vector<std::vector<std::vector<double>>> values;  // [layer][head][r]
};

struct ModelDiagnostics {
  int64_t n_layer = 0, n_head = 0;
  int64_t window = 0, windows = 0;  // window length and windows measured
  double sink_threshold = 0.3;
  int64_t fixed_position = -1;
  std::vector<std::vector<HeadStats>> heads;  // [layer][head]
  std::vector<HiddenStats> hidden;            // [layer]: the residual stream after block l
  SinkK sink_k;                               // on its own windows (sink_k.window tokens)
  // The variant's learned statistics, in the order its learned() lists them.
  std::vector<LearnedValues> learned;
};

// The windows of `tokens` the diagnostics read: consecutive, non-overlapping, `window` tokens each,
// as many whole windows as fit in min(tokens.size(), max_tokens); when fewer than `window` tokens
// exist, one shorter window of all of them. With fixed_position >= 0 token fixed_position of every
// window is replaced by fixed_token_id (Mask@k, as training placed it). Returns [N, window] int64.
torch::Tensor diagnostic_windows(const std::vector<int64_t>& tokens, const DiagnosticsOptions& opts);

// Runs `model` (eval mode, eager weights) over the windows and measures everything above; Sink_k
// on a second cut of the same text into windows of min(sink_k.window, window) tokens, with
// K = min(sink_k.keys, that window).
ModelDiagnostics measure(model::CausalLMImpl& model, const std::vector<int64_t>& tokens,
                         const DiagnosticsOptions& opts);

// The attention weights [T, T] of one layer and head on one window (heatmaps).
torch::Tensor attention_map(model::CausalLMImpl& model, const torch::Tensor& window,
                            int64_t layer, int64_t head);

// Store rows: per (layer, head) every HeadStats field plus each learned statistic (a profile as
// rows with index r); per layer (head -1) the means over its heads (learned per-head numbers
// included), its sink_rate, its HiddenStats (top_activation with index r = 1..3) and its sink_k /
// alpha_k (index k); per model (layer -1, head -1) the means over all layers and heads, sink_rate,
// tokens (query rows per head), sink_mass_uniform, massive_activations (summed over layers),
// kurtosis, mean_cosine and effective_rank (means over layers), sink_k, alpha_k, alpha_k_uniform
// (index k), sink_k_window and sink_k_epsilon.
std::vector<results::AttnStat> to_attn_stats(const ModelDiagnostics& d);

}  // namespace attnbench::evals::diagnostics
