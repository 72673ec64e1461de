// Head-wise RMSNorm (Li, Jiang, Sun and Hu 2026, "The Structural Origin of Attention Sink", arXiv
// 2605.06611, sec. 5.1): each head's attention output is RMS-normalised before the output
// projection,
//   o_i^h = sum_j a_ij^h v_j^h,   o'_i^h = o_i^h / sqrt(mean_d (o_i^h)_d^2 + eps) * w,
// with a causal softmax a and RoPE as in the baseline. The paper's account of the sink: value
// aggregation leaves the first token's output with a far smaller variance than the others', a gap
// the FFN's "super neurons" amplify into a massive activation and the first-token sink; normalising
// every head's output closes the gap at its source.
//
// Readings (docs/variants.md, "Sink cures"; no code is published):
// - w: the paper's gain is one learned vector of D shared by the heads ("shared", the default);
//   `head_norm_weight = "per_head"` learns one vector per head instead. Init 1, float32, no decay
//   (the model's own norm gains do not decay).
// - eps: the decoder's RMSNorm eps (model.norm_eps), as the paper states none.
// - Every layer, before the output projection and before an output gate when one is configured
//   (the family's options all compose: the norm acts on the attention's output).
// - The norm is taken in float32 at least, as attnbench's other norms.
// It never starts as the pretrained model's attention: a token's head output is divided by its own
// RMS, which no weight undoes.
//
// The attention itself is the family's (softmax, RoPE, any option), on its fused kernels; the norm
// is applied after them.
#include "variants/family.h"

namespace attnbench::variants {
namespace {

// The family at its defaults: softmax with RoPE.
FamilyDefaults head_rmsnorm_defaults() {
  FamilyDefaults d;
  return d;
}

class HeadRMSNormAttentionImpl : public FamilyAttentionImpl {
 public:
  explicit HeadRMSNormAttentionImpl(const VariantContext& ctx)
      : FamilyAttentionImpl(ctx), eps_(ctx.norm_eps), heads_(ctx.n_head) {
    per_head_ = config::param<std::string>(ctx.attention.params, "head_norm_weight") == "per_head";
    // A child module, so that the gain is saved as "head_norm.weight".
    auto norm = register_module("head_norm", std::make_shared<torch::nn::Module>());
    weight_ = norm->register_parameter(
        "weight", per_head_ ? torch::ones({ctx.n_head, ctx.head_dim}) : torch::ones({ctx.head_dim}));
  }

  torch::Tensor forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor& x, torch::Tensor* weights) override {
    return normalise(FamilyAttentionImpl::forward(q, k, v, x, weights));
  }

  torch::Tensor output_from_weights(const torch::Tensor& weights, const torch::Tensor& v,
                                    const torch::Tensor& x) override {
    return normalise(FamilyAttentionImpl::output_from_weights(weights, v, x));
  }

  std::vector<LearnedStatistic> learned(const torch::Tensor& x) override {
    std::vector<LearnedStatistic> out = FamilyAttentionImpl::learned(x);
    const torch::Tensor gain = per_head_ ? weight_.mean(-1) : weight_.mean().expand({heads_});
    out.push_back({"head_norm_weight", "mean gain of the head-wise RMSNorm", LearnedStatistic::Kind::PerHead,
                   gain});
    return out;
  }

 private:
  // o [B, H, Tq, D] -> o / rms(o) * w per head and query, in o's dtype.
  torch::Tensor normalise(const torch::Tensor& o) const {
    const auto dtype = torch::promote_types(o.scalar_type(), torch::kFloat32);
    const auto of = o.to(dtype);
    const auto w = per_head_ ? weight_.to(dtype).unsqueeze(1) : weight_.to(dtype);  // [H, 1, D] or [D]
    return (of * torch::rsqrt(of.pow(2).mean(-1, /*keepdim=*/true) + eps_) * w).to(o.scalar_type());
  }

  double eps_;
  int64_t heads_;
  bool per_head_ = false;
  torch::Tensor weight_;  // head_norm.weight: [D] (shared) or [H, D] (per_head)
};

VariantRegistration head_rmsnorm_registration() {
  VariantRegistration r = family_registration(
      "head_rmsnorm",
      "head-wise RMSNorm: each head's softmax-attention output RMS-normalised before the output "
      "projection (Li et al. 2026, the structural origin of attention sink), RoPE",
      head_rmsnorm_defaults());
  config::ParamSpec gain;
  gain.name = "head_norm_weight";
  gain.type = config::ValueType::String;
  gain.default_value = std::string("shared");
  gain.allowed = {"shared", "per_head"};
  gain.doc = "the norm's learned gain: one vector of D shared by the heads (the paper), or one per head";
  r.schema.params.push_back(std::move(gain));
  r.factory = [](const VariantContext& ctx) { return std::make_shared<HeadRMSNormAttentionImpl>(ctx); };
  r.parameter_count = [](const VariantContext& ctx) {
    const bool per_head = config::param<std::string>(ctx.attention.params, "head_norm_weight") == "per_head";
    return family_parameter_count(ctx) + (per_head ? ctx.n_head : 1) * ctx.head_dim;
  };
  // Decays: the family's rule (head_norm.weight, a gain, does not).
  r.pretrained_start = [](const config::AttentionConfig&) {
    return std::string("head-wise RMSNorm divides each head's output by its own RMS per token, "
                       "which no gain undoes");
  };
  return r;
}

const RegisterVariant head_rmsnorm_variant(head_rmsnorm_registration());

}  // namespace
}  // namespace attnbench::variants
