// Sigmoid attention (Ramapuram et al. 2024, "Theory, Analysis, and Best Practices for Sigmoid
// Self-Attention"; their reference code apple/ml-sigmoid-attention): every causal weight is an
// independent sigmoid, no row normalisation,
//   a_ij = sigmoid(s_ij + b)  for j <= i, 0 for j > i,   s_ij = (R_i q_i) . (R_j k_j) / sqrt(D)
// with RoPE R (position = "rope", the default) or none. The bias b is one constant, b = -ln(n) with
// n the training context length, as in the reference code: not a per-query -ln(i + 1). With scores
// near 0 each weight is 1 / (1 + n), so a full row of n keys carries a mass of about 1, as softmax.
//
// The scores come from the shared position part, as for every variant that is a function of the
// scores (variants/score_normalizer.h): this file is the whole variant, its schema, its weights as
// a function of the scores, and its registration. Its parameter count is 0 (b is a constant, not
// learned); no fused kernel serves it.
#include <cmath>

#include "variants/eager.h"
#include "variants/position.h"
#include "variants/registry.h"
#include "variants/score_normalizer.h"

namespace attnbench::variants {
namespace {

config::VariantSchema sigmoid_schema() {
  config::ParamSpec bias_length;
  bias_length.name = "bias_length";
  bias_length.type = config::ValueType::Int;
  bias_length.default_value = int64_t{0};
  bias_length.min = 0.0;
  bias_length.doc = "n in the constant bias b = -ln(n); 0 = model.context_length (the paper's "
                    "choice); 1 gives b = 0";
  config::VariantSchema s;
  s.name = "sigmoid";
  s.description = "sigmoid attention: sigmoid(s_ij + b), b = -ln(context length), RoPE, no "
                  "normalisation";
  s.params = position_params(PositionDefaults{}, {"rope", "none"});
  s.params.push_back(bias_length);
  s.checks = {check_rope};
  return s;  // kernels: none, eager only
}

// b = -ln(n), n = bias_length or, when 0, the model's context length.
double sigmoid_bias(const VariantContext& ctx) {
  const int64_t n = config::param<int64_t>(ctx.attention.params, "bias_length");
  return -std::log(static_cast<double>(n > 0 ? n : ctx.context_length));
}

// The weights from the scores s [B, H, Tq, T] (future entries unmasked): sigmoid(s + b) on the
// visible keys, 0 on the future ones.
torch::Tensor sigmoid_weights(const torch::Tensor& s, double bias) {
  const auto visible = causal_mask(s.size(-2), s.size(-1), s.device());
  return torch::sigmoid(s + bias).masked_fill(visible.logical_not(), 0.0);
}

VariantRegistration sigmoid_registration() {
  VariantRegistration r;
  r.schema = sigmoid_schema();
  r.factory = [](const VariantContext& ctx) {
    const double bias = sigmoid_bias(ctx);
    return std::make_shared<ScoreNormalizerAttentionImpl>(
        ctx, [bias](const torch::Tensor& s) { return sigmoid_weights(s, bias); });
  };
  r.parameter_count = [](const VariantContext&) { return int64_t{0}; };  // b is a constant
  return r;  // decays: no own parameters
}

const RegisterVariant sigmoid(sigmoid_registration());

}  // namespace
}  // namespace attnbench::variants
