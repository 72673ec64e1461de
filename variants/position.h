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
#include "kernels/attention_family.h"
#include "variants/rope.h"
#include "variants/variant.h"

namespace attnbench::variants {

// The parsed `position` option.
struct PositionParts {
  bool rope = false;
  bool alibi = false;
  bool distance_bias = false;
};
// "none" | "rope" | "alibi" | "distance_bias" | "rope+distance_bias" (validated by the schema).
PositionParts parse_position(const std::string& position);
// A function, not a global: variants register their schemas during static initialisation, in an
// order across files that C++ leaves unspecified.
const std::vector<std::string>& position_options();

// Rotary position embedding on x [B, H, T, D] for positions first..first+T-1 (first > 0: the new
// positions of an incremental step), the half-split (GPT-NeoX / Llama / fla) pairing: dimension d
// rotates with d + D/2 at angle pos * inv_freq_d (variants/rope.h; theta^(-2d/D) unscaled). Angles
// are computed in float64 and the result has x's dtype. D must be even.
torch::Tensor apply_rope(const torch::Tensor& x, const RopeFrequencies& frequencies,
                         int64_t first = 0);

// The RoPE frequencies the resolved parameters give (rope_theta, and the rope_scaling parameters
// when it is set); for a position with rope.
RopeFrequencies rope_frequencies(const config::ParamMap& params);

// A config check (config::VariantCheck) for variants with a `position` parameter: RoPE rotates
// dimension pairs, so when `position` includes rope the head dimension must be even, and Llama 3's
// scaling needs rope_high_freq_factor > rope_low_freq_factor.
std::optional<config::ConfigProblem> check_rope(const config::ModelConfig& model,
                                                const config::AttentionConfig& attention);

// ALiBi slopes (Press et al. 2022, "Train Short, Test Long"): for n a power of two,
// slope_k = 2^(-8k/n), k = 1..n. Otherwise take the n' = 2^floor(log2 n) slopes of that schedule,
// then every other slope of the 2n' schedule (its 1st, 3rd, ...) until n slopes are reached.
std::vector<double> alibi_slopes(int64_t n_head);

// The defaults of a variant's position parameters.
struct PositionDefaults {
  std::string position = "rope";
  double rope_theta = 10000.0;
  int64_t bias_window = 1024;
};

// The schema's position parameters: `position` (one of `allowed`), `rope_theta` and `rope_scaling`
// with its parameters (when it has rope; a continued Llama 3.x sets them, docs/pretrained.md) and
// `bias_window` (when it has distance_bias). Pair with check_rope.
std::vector<config::ParamSpec> position_params(const PositionDefaults& defaults,
                                               const std::vector<std::string>& allowed =
                                                   position_options());

// The position part's parameters in one layer: H * W with a distance bias, else 0.
int64_t position_parameter_count(const VariantContext& ctx);

// The position part of a variant module, shared by every variant with a `position` parameter:
// RoPE on q and k, and the additive ALiBi slopes and learnable distance bias, which it hands to
// the scores as FamilySpec fields (eager_family_scores and the fused kernels read them there).
class PositionScores {
 public:
  // Registers `distance_bias` [H, W] (float32, init 0, docs/paper.md 1.2) on `owner` when the
  // position has one; the parameter keeps that name in checkpoints.
  PositionScores(torch::nn::Module& owner, const VariantContext& ctx);

  // q or k [B, H, T, D] at positions first..first+T-1 with RoPE applied when the position has it
  // (else unchanged).
  torch::Tensor rotate(const torch::Tensor& x, int64_t first = 0) const;

  // Sets spec.alibi_slopes (moved to `device` once) and spec.distance_bias; undefined when absent.
  void describe(kernels::FamilySpec& spec, const torch::Device& device);

  // The "distance_bias" profile b[h, r] for r < min(W, T) (a window of T tokens shows no larger
  // distance), appended to `out` when the position has a distance bias.
  void learned(const torch::Tensor& x, std::vector<LearnedStatistic>& out) const;

 private:
  PositionParts parts_;
  RopeFrequencies rope_;
  torch::Tensor alibi_slopes_;  // [H] float64, a constant (not a parameter or checkpointed buffer)
  torch::Tensor distance_bias_;
};

}  // namespace attnbench::variants
