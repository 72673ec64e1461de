// Stick-breaking attention (Tan et al. 2025, "Scaling Stick-Breaking Attention: An Efficient
// Implementation and In-depth Study"; reference code shawntan/stickbreaking-attention, sb_ref.py
// and its tests). Query i breaks a stick of length 1 over its earlier keys, the nearest first: key
// j takes the share beta_ij = sigmoid(s_ij) of what the keys between them left,
//   a_ij = beta_ij prod_{j<k<i} (1 - beta_ik)                    for j < i
// and what no key took, r_i = 1 - sum_{j<i} a_ij = prod_{j<i} (1 - beta_ij), goes to the query's
// own value:
//   o_i = sum_{j<i} a_ij v_j + r_i v_i.
// s_ij are the scores after the position part (none by default, as the paper: the breaking order
// already favours recent keys), scale 1/sqrt(D).
//
// Readings (docs/variants.md, "Sink cures"):
// - The query's own key takes no share (the reference's attend_current = False, its default): it
//   is reached only through the remainder.
// - The remainder goes to v_i, as the reference's tests (o + rem * v) and the authors' model
//   configurations (sb_remainder = True) do. The exposed weights carry r_i on their diagonal, so
//   every row sums to 1 and the output is weights @ v; row 0 is all remainder.
// - Log space, as sb_ref.py: log a_ij = log sigmoid(s_ij) + sum_{j<k<i} log sigmoid(-s_ik), the
//   sum a reverse cumulative sum over k (the reference multiplies by a triangular matrix, O(T^3);
//   this is O(T^2) and the same sum), all in float32 at least. r_i is taken as the product, in log
//   space too; the reference's 1 - sum_j a_ij, the same number, rounds below 0 in float32 when the
//   keys take nearly all the stick.
//
// This file is the whole variant; no fused kernel serves it (the reference's Triton kernels are not
// ported).
#include "variants/eager.h"
#include "variants/position.h"
#include "variants/registry.h"
#include "variants/score_normalizer.h"

namespace attnbench::variants {
namespace {

config::VariantSchema stick_breaking_schema() {
  PositionDefaults defaults;
  defaults.position = "none";
  config::VariantSchema s;
  s.name = "stick_breaking";
  s.description = "stick-breaking attention: key j takes sigmoid(s_ij) of the stick the nearer keys "
                  "left, the rest goes to the query's own value (Tan et al. 2025), no position";
  s.params = position_params(defaults);
  s.checks = {check_rope};
  return s;  // kernels: none, eager only
}

// The weights [B, H, Tq, T] from the scores s (float32 at least; row r is query i = T - Tq + r):
// a_ij for j < i, the remainder r_i at j = i, 0 after it.
torch::Tensor stick_breaking(const torch::Tensor& s) {
  const int64_t Tq = s.size(-2), T = s.size(-1);
  const auto visible = causal_mask(Tq, T, s.device());         // j <= i
  const auto not_earlier = visible.tril(T - Tq - 1).logical_not();  // j >= i
  // log(1 - beta_ik), 0 where k is no earlier key: nothing is broken off there.
  const auto log_rest = torch::log_sigmoid(-s).masked_fill(not_earlier, 0.0);
  // sum_{j<k<i} log(1 - beta_ik): the sum over k >= j, less the term k = j.
  const auto log_left = log_rest.flip(-1).cumsum(-1).flip(-1) - log_rest;
  // Both logs are <= 0, so exp never overflows, not even on the entries masked after it.
  const auto a = torch::exp(torch::log_sigmoid(s) + log_left).masked_fill(not_earlier, 0.0);
  // r_i = prod_{j<i} (1 - beta_ij), which equals 1 - sum_j a_ij (the sum telescopes) but, unlike
  // that difference, never rounds below 0 when the keys take nearly the whole stick.
  const auto own_key = visible.logical_and(not_earlier);  // j = i
  return a + torch::exp(log_rest.sum(-1, /*keepdim=*/true)) * own_key;
}

VariantRegistration stick_breaking_registration() {
  VariantRegistration r;
  r.schema = stick_breaking_schema();
  r.factory = [](const VariantContext& ctx) {
    return std::make_shared<ScoreNormalizerAttentionImpl>(ctx, stick_breaking);
  };
  r.parameter_count = position_parameter_count;  // the position part's alone
  return r;  // decays: none (a distance bias is a bias)
}

const RegisterVariant stick_breaking_variant(stick_breaking_registration());

}  // namespace
}  // namespace attnbench::variants
