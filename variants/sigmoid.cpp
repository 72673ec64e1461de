// Sigmoid attention (Ramapuram et al. 2024, "Theory, Analysis, and Best Practices for Sigmoid
// Self-Attention"; their reference code apple/ml-sigmoid-attention): every causal weight is an
// independent sigmoid, no row normalisation,
//   a_ij = sigmoid(s_ij + b)  for j <= i, 0 for j > i,   s_ij = (R_i q_i) . (R_j k_j) / sqrt(D)
// with RoPE R (position = "rope", the default) or none. The bias b is one constant, b = -ln(n) with
// n the training context length, as in the reference code: not a per-query -ln(i + 1). With scores
// near 0 each weight is 1 / (1 + n), so a full row of n keys carries a mass of about 1, as softmax.
//
// This file is the whole variant: its schema, config check, factory, parameter count (0: b is a
// constant, not learned) and the eager forward. No fused kernel serves it.
#include <cmath>

#include "variants/eager.h"
#include "variants/position.h"
#include "variants/registry.h"

namespace attnbench::variants {
namespace {

config::VariantSchema sigmoid_schema() {
  config::ParamSpec position;
  position.name = "position";
  position.type = config::ValueType::String;
  position.default_value = std::string("rope");
  position.allowed = {"rope", "none"};
  position.doc = "rotary q/k (rope) or no positional encoding (none)";
  config::ParamSpec theta;
  theta.name = "rope_theta";
  theta.type = config::ValueType::Float;
  theta.default_value = 10000.0;
  theta.min = 1.0;
  theta.max = 1e12;  // Llama 3 uses 5e5, Qwen 1e6; within float32 with room
  theta.doc = "RoPE base: dimension pair d rotates at pos * theta^(-2d/D)";
  theta.applies_if = {{"position", {"rope"}}};
  config::ParamSpec bias_length;
  bias_length.name = "bias_length";
  bias_length.type = config::ValueType::Int;
  bias_length.default_value = int64_t{0};
  bias_length.min = 0.0;
  bias_length.doc = "n in the constant bias b = -ln(n); 0 = model.context_length (the paper's "
                    "choice); 1 gives b = 0";
  return {"sigmoid",
          "sigmoid attention: sigmoid(s_ij + b), b = -ln(context length), RoPE, no normalisation",
          {position, theta, bias_length},
          {check_rope_head_dim},
          /*kernels: eager only*/ ""};
}

class SigmoidAttentionImpl : public AttentionVariantImpl {
 public:
  explicit SigmoidAttentionImpl(const VariantContext& ctx) {
    const auto& p = ctx.attention.params;
    if (config::param<std::string>(p, "position") == "rope") {
      rope_theta_ = config::param<double>(p, "rope_theta");
    }
    const int64_t n = config::param<int64_t>(p, "bias_length");
    bias_ = -std::log(static_cast<double>(n > 0 ? n : ctx.context_length));
  }

  torch::Tensor forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor&, torch::Tensor* weights) override {
    const int64_t Tq = q.size(2), T = k.size(2), D = q.size(3);
    const torch::Tensor qr = rope_theta_ > 0 ? apply_rope(q, rope_theta_, T - Tq) : q;
    const torch::Tensor kr = rope_theta_ > 0 ? apply_rope(k, rope_theta_) : k;
    const auto dtype = torch::promote_types(q.scalar_type(), torch::kFloat32);
    const auto causal = causal_mask(Tq, T, q.device());
    const auto s = torch::matmul(qr, kr.transpose(-2, -1)).to(dtype) / std::sqrt(double(D));
    const auto a = torch::sigmoid(s + bias_).masked_fill(causal.logical_not(), 0.0);
    if (weights) *weights = a;
    return torch::matmul(a.to(v.scalar_type()), v);
  }

 private:
  double rope_theta_ = 0.0;  // 0: no RoPE
  double bias_ = 0.0;        // b = -ln(n)
};

const RegisterVariant sigmoid({sigmoid_schema(),
                               [](const VariantContext& ctx) {
                                 return std::make_shared<SigmoidAttentionImpl>(ctx);
                               },
                               /*parameter_count: b is a constant*/ [](const VariantContext&) {
                                 return int64_t{0};
                               },
                               /*decays: no own parameters*/ {},
                               /*fused: eager only*/ false});

}  // namespace
}  // namespace attnbench::variants
