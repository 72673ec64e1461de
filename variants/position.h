// The position part of the attention family (docs/variants.md, "Scores"; docs/paper.md 1.2):
//   rope           rotary embedding applied to q and k ("dimensions")
//   alibi          additive -slope_h * (i - j), slopes from the ALiBi paper's geometric schedule
//   distance_bias  learnable table b[h, r], r = i - j in [0, W), 0 beyond W ("heads")
// and the combination rope+distance_bias (Lazy Attention's positional discrimination).
#pragma once
#include <torch/torch.h>

#include <optional>
#include <string>
#include <vector>

#include "core/config/attention_schema.h"

namespace attnbench::variants {

// The parsed `position` option.
struct PositionParts {
  bool rope = false;
  bool alibi = false;
  bool distance_bias = false;
};
// "none" | "rope" | "alibi" | "distance_bias" | "rope+distance_bias" (validated by the schema).
PositionParts parse_position(const std::string& position);
extern const std::vector<std::string> kPositionOptions;

// Rotary position embedding on x [B, H, T, D] for positions 0..T-1, the half-split (GPT-NeoX /
// Llama / fla) pairing: dimension d rotates with d + D/2 at angle pos * theta^(-2d/D).
// Angles are computed in float64 and the result has x's dtype. D must be even.
torch::Tensor apply_rope(const torch::Tensor& x, double theta);

// A config check (config::VariantCheck) for variants with a `position` parameter: RoPE rotates
// dimension pairs, so when `position` includes rope the head dimension must be even.
std::optional<config::ConfigProblem> check_rope_head_dim(const config::ModelConfig& model,
                                                         const config::AttentionConfig& attention);

// ALiBi slopes (Press et al. 2022, "Train Short, Test Long"): for n a power of two,
// slope_k = 2^(-8k/n), k = 1..n. Otherwise take the n' = 2^floor(log2 n) slopes of that schedule,
// then every other slope of the 2n' schedule (its 1st, 3rd, ...) until n slopes are reached.
std::vector<double> alibi_slopes(int64_t n_head);

}  // namespace attnbench::variants
