// Differential attention (Ye et al. 2025, "Differential Transformer"; reference code
// microsoft/unilm, Diff-Transformer/multihead_diffattn.py). Each head splits q and k along D into
// halves q1, q2, k1, k2 of D/2 and subtracts two causal softmax maps, cancelling the attention both
// give to the same irrelevant keys (a sink among them):
//   a = softmax(s1) - lambda softmax(s2),   s_m = (R q_m) . (R k_m) / sqrt(D/2) + position biases
//   o = RMSNorm(a v) * (1 - lambda_init)
//   lambda = exp(lambda_q1 . lambda_k1) - exp(lambda_q2 . lambda_k2) + lambda_init
//   lambda_init = 0.8 - 0.6 exp(-0.3 l),   l the layer's 0-based depth
// A row of a sums to 1 - lambda, and its weights may be negative.
//
// Readings (docs/variants.md, "Sink cures"):
// - A model of H heads of D is the reference's MultiheadDiffAttn with num_heads = H (its head_dim
//   is our D/2, its value width 2 * head_dim our D). The paper matches it with a softmax baseline
//   of 2H heads of D/2; against softmax with H heads of D each map here has half the width.
// - l: the reference's `depth` ("current layer index", 0 in its example), the paper's l - 1 for
//   l = 1..L; layer 0 has lambda_init = 0.2.
// - lambda is one number per layer, shared by the heads (one set of four [D/2] vectors per layer,
//   N(0, 0.1), float32), computed in float32 at least as the reference's .float().
// - The norm (the reference's `subln`) is an RMSNorm over each head's D outputs, eps 1e-5, with one
//   weight [D] (init 1) shared by the heads; it is taken in float32 at least.
// - RoPE rotates each half as a head of D/2, at the frequencies theta^(-2d/(D/2)). The reference
//   pairs neighbouring dimensions (interleaved); attnbench's half-split pairing differs from it by
//   a fixed permutation of q's and k's dimensions, which the projections absorb.
// - ALiBi and the distance bias, when chosen, add the same bias to both maps' scores.
//
// This file is the whole variant; no fused kernel serves it.
#include <cmath>
#include <optional>
#include <string>

#include "variants/eager.h"
#include "variants/position.h"
#include "variants/registry.h"

namespace attnbench::variants {
namespace {

constexpr double kNormEps = 1e-5;     // the reference's RMSNorm eps
constexpr double kLambdaStd = 0.1;    // the reference's init of the lambda vectors

// lambda_init for the layer at 0-based depth `layer` (the reference's lambda_init_fn).
double lambda_init(int64_t layer) {
  return 0.8 - 0.6 * std::exp(-0.3 * static_cast<double>(layer));
}

// Each half of the head dimension is a head of its own, and RoPE rotates it in pairs.
std::optional<config::ConfigProblem> check_head_dim_halves(
    const config::ModelConfig& model, const config::AttentionConfig& attention) {
  const std::string position = config::param_or<std::string>(attention.params, "position", "");
  const bool rope = position.find("rope") != std::string::npos;
  const int64_t multiple = rope ? 4 : 2;
  if (model.head_dim() % multiple == 0) return std::nullopt;
  return config::ConfigProblem{
      "model.n_head",
      std::string("differential attention splits each head's q and k into two halves") +
          (rope ? ", each rotated by RoPE in pairs," : "") +
          " so the head dimension must be divisible by " + std::to_string(multiple) +
          "; model.d_model / model.n_head = " + std::to_string(model.head_dim())};
}

config::VariantSchema differential_schema() {
  config::VariantSchema s;
  s.name = "differential";
  s.description = "differential attention: softmax(q1 k1) - lambda softmax(q2 k2) over the two "
                  "halves of each head, per-head RMSNorm, lambda learned per layer (Ye et al. "
                  "2025), RoPE";
  s.params = position_params(PositionDefaults{});
  s.checks = {check_head_dim_halves};
  return s;  // kernels: none, eager only
}

class DifferentialAttentionImpl : public AttentionVariantImpl {
 public:
  explicit DifferentialAttentionImpl(const VariantContext& ctx)
      : position_(*this, ctx), n_head_(ctx.n_head), lambda_init_(lambda_init(ctx.layer)) {
    const auto init = [&] {
      return torch::randn({ctx.head_dim / 2}, torch::kFloat32) * kLambdaStd;
    };
    lambda_q1_ = register_parameter("lambda_q1", init());
    lambda_k1_ = register_parameter("lambda_k1", init());
    lambda_q2_ = register_parameter("lambda_q2", init());
    lambda_k2_ = register_parameter("lambda_k2", init());
    // A child module, so that the weight keeps the reference's name "subln.weight".
    auto subln = register_module("subln", std::make_shared<torch::nn::Module>());
    norm_weight_ =
        subln->register_parameter("weight", torch::ones({ctx.head_dim}, torch::kFloat32));
  }

  torch::Tensor forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor& x, torch::Tensor* weights) override {
    kernels::FamilySpec spec;
    position_.describe(spec, q.device());
    const int64_t half = q.size(3) / 2, Tq = q.size(2), first = k.size(2) - Tq;
    const auto future = causal_mask(Tq, k.size(2), q.device()).logical_not();
    const auto map = [&](int64_t m) {  // causal softmax over half m of q and k (float32 at least)
      const auto s = eager_family_scores(position_.rotate(q.narrow(-1, m * half, half), first),
                                         position_.rotate(k.narrow(-1, m * half, half)), spec);
      return torch::softmax(s.masked_fill(future, -INFINITY), -1);
    };
    const auto a1 = map(0);
    const auto a = a1 - lambda(a1.scalar_type()) * map(1);
    if (weights) *weights = a;
    return output_from_weights(a, v, x);
  }

  // RMSNorm(a v) * (1 - lambda_init), in v's dtype.
  torch::Tensor output_from_weights(const torch::Tensor& weights, const torch::Tensor& v,
                                    const torch::Tensor& x) override {
    const auto o = AttentionVariantImpl::output_from_weights(weights, v, x);
    const auto dtype = torch::promote_types(o.scalar_type(), torch::kFloat32);
    const auto of = o.to(dtype);
    const auto normed = of * torch::rsqrt(of.pow(2).mean(-1, /*keepdim=*/true) + kNormEps);
    return (normed * norm_weight_.to(dtype) * (1.0 - lambda_init_)).to(v.scalar_type());
  }

  std::vector<LearnedStatistic> learned(const torch::Tensor& x) override {
    std::vector<LearnedStatistic> out;
    position_.learned(x, out);
    const auto dtype = torch::promote_types(lambda_q1_.scalar_type(), torch::kFloat32);
    out.push_back({"lambda", "differential lambda (one per layer)", LearnedStatistic::Kind::PerHead,
                   lambda(dtype).expand({n_head_})});
    return out;
  }

 private:
  // lambda, a scalar in `dtype`.
  torch::Tensor lambda(torch::ScalarType dtype) const {
    const auto dot = [&](const torch::Tensor& a, const torch::Tensor& b) {
      return (a.to(dtype) * b.to(dtype)).sum();
    };
    return torch::exp(dot(lambda_q1_, lambda_k1_)) - torch::exp(dot(lambda_q2_, lambda_k2_)) +
           lambda_init_;
  }

  PositionScores position_;
  int64_t n_head_;
  double lambda_init_;  // a constant of the layer, not learned
  torch::Tensor lambda_q1_, lambda_k1_, lambda_q2_, lambda_k2_;  // [D/2] each
  torch::Tensor norm_weight_;                                     // subln.weight [D]
};

VariantRegistration differential_registration() {
  VariantRegistration r;
  r.schema = differential_schema();
  r.factory = [](const VariantContext& ctx) {
    return std::make_shared<DifferentialAttentionImpl>(ctx);
  };
  // Four lambda vectors of D/2, the norm weight of D, the position part's.
  r.parameter_count = [](const VariantContext& ctx) {
    return 4 * (ctx.head_dim / 2) + ctx.head_dim + position_parameter_count(ctx);
  };
  return r;  // decays: none (vectors; the model's own norm weights do not decay either)
}

const RegisterVariant differential_variant(differential_registration());

}  // namespace
}  // namespace attnbench::variants
