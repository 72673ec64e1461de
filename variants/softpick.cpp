// Softpick attention (Zuhri et al. 2025, "Softpick: No Attention Sink, No Massive Activations with
// Rectified Softmax"; reference code zaydzuhri/softpick-attention, naive_softpick_attn.py): the
// softmax is replaced by a rectified one whose rows need not sum to 1,
//   a_ij = ReLU(e^{s_ij} - 1) / (sum_{k<=i} |e^{s_ik} - 1| + eps)   for j <= i, 0 for j > i
// with s_ij the causal scores after the position part (RoPE by default). A key with s_ij <= 0 gets
// exactly 0, so a head can attend to nothing: a row sums to P / (P + N + eps) with P the mass of
// its positive scores and N that of its negative ones.
//
// Computed as the reference does, with numerator and denominator multiplied by e^{-c}:
//   a_ij = ReLU(e^{s_ij - c} - e^{-c}) / (sum_k |e^{s_ik - c} - e^{-c}| + eps),
// eps = 1e-8 added to the rescaled sum (so it is eps * e^c in the formula above). The reference
// takes c = m, the row's maximum over its visible keys; here c = max(m, 0). Both are the same where
// m >= 0; where m < 0 every visible score is negative and the row is exactly 0 either way, but the
// reference's e^{-m} overflows (m < -709 in float64, -88 in float32) and turns its gradients into
// NaN. Future keys are left out of the sum, as the reference's isfinite() mask does.
//
// This file is the whole variant; no fused kernel serves it (the reference's Triton kernel is not
// ported).
#include <cmath>

#include "variants/eager.h"
#include "variants/position.h"
#include "variants/registry.h"
#include "variants/score_normalizer.h"

namespace attnbench::variants {
namespace {

constexpr double kEps = 1e-8;  // the naive reference's eps (its Triton kernel hardcodes 1e-6)

config::VariantSchema softpick_schema() {
  config::VariantSchema s;
  s.name = "softpick";
  s.description = "softpick: ReLU(e^s - 1) / sum |e^s - 1| over the visible keys (Zuhri et al. "
                  "2025), rows may sum below 1, RoPE";
  s.params = position_params(PositionDefaults{});
  s.checks = {check_rope};
  return s;  // kernels: none, eager only
}

// Softpick over the last dimension of the scores s [B, H, Tq, T], future keys left out; float32 at
// least, as s.
torch::Tensor softpick(const torch::Tensor& s) {
  const auto future = causal_mask(s.size(-2), s.size(-1), s.device()).logical_not();
  const auto visible = s.masked_fill(future, -INFINITY);
  const auto c = visible.amax(-1, /*keepdim=*/true).clamp_min(0.0);
  // e^{-c} (e^s - 1); exp(-inf) = 0 keeps future scores out of the gradient.
  const auto shifted = (torch::exp(visible - c) - torch::exp(-c)).masked_fill(future, 0.0);
  return torch::relu(shifted) / (shifted.abs().sum(-1, /*keepdim=*/true) + kEps);
}

VariantRegistration softpick_registration() {
  VariantRegistration r;
  r.schema = softpick_schema();
  r.factory = [](const VariantContext& ctx) {
    return std::make_shared<ScoreNormalizerAttentionImpl>(ctx, softpick);
  };
  r.parameter_count = position_parameter_count;  // the position part's alone
  return r;  // decays: none (a distance bias is a bias)
}

const RegisterVariant softpick_variant(softpick_registration());

}  // namespace
}  // namespace attnbench::variants
