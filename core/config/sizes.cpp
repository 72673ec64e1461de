#include "core/config/sizes.h"

#include <unistd.h>

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/config/fields.h"

namespace attnbench::config {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
// No single GPU holds more (an H200 has 141 GiB): a config beyond this cannot train anywhere.
constexpr int64_t kAcceleratorCapBytes = 256 * kGiB;
// Per parameter: the fp32 weight, its gradient and AdamW's two moments.
constexpr int64_t kBytesPerParameter = 16;

// Physical memory from sysconf, 0 when it cannot be read.
int64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? saturating_mul(pages, page) : 0;
}

// The vocabulary padded to a multiple of 64 as the embedding allocates it (ModelConfig), without
// the overflow of vocab_size + 63 near INT64_MAX.
int64_t padded_vocab(int64_t vocab) { return saturating_mul((vocab - 1) / 64 + 1, 64); }

// The key with the largest value among `keys`: what to lower in the dominant term.
std::string largest(const std::vector<std::pair<std::string, int64_t>>& keys) {
  return std::max_element(keys.begin(), keys.end(),
                          [](auto& a, auto& b) { return a.second < b.second; })
      ->first;
}

// The value of a dotted key of the fixed sections, for messages.
std::string value_of(const RunConfig& cfg, const std::string& dotted) {
  const auto dot = dotted.find('.');
  return to_string(find_field(dotted.substr(0, dot), dotted.substr(dot + 1))->get(cfg));
}

}  // namespace

int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

MemoryEstimate estimate_training_memory(const RunConfig& cfg) {
  const ModelConfig& m = cfg.model;
  const int64_t vocab = padded_vocab(m.vocab_size);
  // Token embedding and (untied) LM head; per layer the q, k, v, o projections (2 d^2 + 2 d kv, kv
  // = d without grouped-query attention) and the SwiGLU's three matrices (3 d d_ffn). Norms and
  // attention parameters are left out: a lower bound.
  const int64_t embedding = saturating_mul(saturating_mul(vocab, m.d_model), m.tie_embeddings ? 1 : 2);
  const int64_t projections = saturating_mul(2, saturating_add(saturating_mul(m.d_model, m.d_model),
                                                               saturating_mul(m.d_model, m.kv_dim())));
  const int64_t per_layer =
      saturating_add(projections, saturating_mul(3, saturating_mul(m.d_model, m.d_ffn)));
  const int64_t layers = saturating_mul(m.n_layer, per_layer);
  // Kept for the backward pass at the least: every layer's input and the logits.
  const int64_t tokens = saturating_mul(cfg.train.batch_size, m.context_length);
  const int64_t per_token = saturating_add(saturating_mul(m.n_layer, m.d_model), vocab);
  const int64_t act_bytes = cfg.train.precision == "bf16" ? 2 : 4;

  MemoryEstimate e;
  e.parameters = saturating_add(embedding, layers);
  e.parameter_bytes = saturating_mul(e.parameters, kBytesPerParameter);
  e.activation_bytes = saturating_mul(act_bytes, saturating_mul(tokens, per_token));
  e.total_bytes = saturating_add(e.parameter_bytes, e.activation_bytes);
  if (e.activation_bytes > e.parameter_bytes) {
    e.key = largest({{"train.batch_size", cfg.train.batch_size},
                     {"model.context_length", m.context_length}});
  } else if (embedding > layers) {
    e.key = largest({{"model.vocab_size", m.vocab_size}, {"model.d_model", m.d_model}});
  } else {  // a derived d_ffn follows d_model: blame d_ffn only when it is out of proportion
    e.key = largest({{"model.n_layer", m.n_layer},
                     {"model.d_model", m.d_model},
                     {"model.d_ffn", m.d_ffn / 8}});
  }
  return e;
}

int64_t memory_limit_bytes(const std::string& device) {
  const int64_t physical = physical_memory_bytes();
  if (physical == 0) return kAcceleratorCapBytes;
  return device == "cpu" ? physical : std::max(physical, kAcceleratorCapBytes);
}

std::string format_bytes(int64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) v /= 1024, ++u;
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[u]);
}

std::optional<ConfigProblem> check_memory(const RunConfig& cfg, const std::string& device) {
  const MemoryEstimate e = estimate_training_memory(cfg);
  const int64_t limit = memory_limit_bytes(device);
  if (e.total_bytes <= limit) return std::nullopt;
  const ModelConfig& m = cfg.model;
  return ConfigProblem{
      e.key,
      fmt::format(
          "{} = {}: training needs at least {} ({} for at least {} parameters with gradients and "
          "AdamW moments + {} of activations for train.batch_size {} x model.context_length {}), more "
          "than the {} a run may use ({}; docs/training.md, \"Validation\"); lower {}",
          e.key, value_of(cfg, e.key), format_bytes(e.total_bytes), format_bytes(e.parameter_bytes),
          e.parameters,
          format_bytes(e.activation_bytes), cfg.train.batch_size, m.context_length,
          format_bytes(limit),
          device == "cpu" ? "this machine's memory"
                                    : "the larger of this machine's memory and 256 GiB",
          e.key)};
}

}  // namespace attnbench::config
