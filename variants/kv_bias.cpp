// Explicit attention bias (Sun et al. 2024, "Massive Activations in Large Language Models", sec. 5;
// reference code locuslab/massive-activations, gpt-2/model_attn_bias.py): every head has a learned
// key k'_h and value v'_h [D] that every query sees besides the sequence's keys,
//   (a_i0, ..., a_ii, a_i,sink) = softmax(s_i0, ..., s_ii, sigma_i)
//   sigma_i = (R_i q_i) . k'_h / sqrt(D)
//   o_i = sum_{j<=i} a_ij v_j + a_i,sink v'_h
// It gives a head somewhere to put attention it does not need, the role the first token plays as an
// attention sink, and the role of StreamingLLM's learned sink token (Xiao et al. 2024).
//
// Readings (docs/variants.md, "Sink cures"):
// - k' has no position. The reference is GPT-2 with learned absolute position embeddings added to
//   the token embeddings, so k' and v' (concatenated after the projections) never see a position.
//   Here q is rotated as for the other keys and k' is not, which is RoPE at position 0 (R_0 = I),
//   the position of a sink token; ALiBi and the distance bias add nothing to sigma_i.
// - k' and v' start at N(0, 0.02), GPT-2's init std: model.init_std (0.02 by default).
// - Neither decays, as attnbench treats every bias (docs/variants.md, "Adding a variant"). The
//   reference's optimizer decays them only as a side effect of their [1, H, 1, D] shape under its
//   "two or more dimensions" rule, against its own comment that biases do not decay.
// - The exposed weights are the a_ij over the sequence's keys (rows sum to 1 - a_i,sink);
//   output_from_weights adds the sink's share of v' back.
//
// The prepended learned sink token form (a token embedding prepended to every sequence and dropped
// from the output) needs the decoder to prepend it, which no variant can do: it is not built.
#include <cmath>

#include "variants/eager.h"
#include "variants/position.h"
#include "variants/registry.h"

namespace attnbench::variants {
namespace {

config::VariantSchema kv_bias_schema() {
  config::VariantSchema s;
  s.name = "kv_bias";
  s.description = "softmax with a learned key k'_h and value v'_h per head that every query sees "
                  "(explicit attention bias, Sun et al. 2024), RoPE";
  s.params = position_params(PositionDefaults{});
  s.checks = {check_rope};
  return s;  // kernels: none, eager only
}

class KvBiasAttentionImpl : public AttentionVariantImpl {
 public:
  explicit KvBiasAttentionImpl(const VariantContext& ctx) : position_(*this, ctx) {
    const auto init = [&] {
      return torch::randn({ctx.n_head, ctx.head_dim}, torch::kFloat32) * ctx.init_std;
    };
    k_bias_ = register_parameter("k_bias", init());
    v_bias_ = register_parameter("v_bias", init());
  }

  torch::Tensor forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor&, torch::Tensor* weights) override {
    const int64_t H = q.size(1), Tq = q.size(2), T = k.size(2), D = q.size(3);
    kernels::FamilySpec spec;
    position_.describe(spec, q.device());
    const torch::Tensor qr = position_.rotate(q, T - Tq);
    const auto s = eager_family_scores(qr, position_.rotate(k), spec);  // float32 at least
    const auto dtype = s.scalar_type();
    const auto sigma = torch::matmul(qr.to(dtype), k_bias_.to(dtype).view({1, H, D, 1})) /
                       std::sqrt(static_cast<double>(D));  // [B, H, Tq, 1]
    const auto future = causal_mask(Tq, T, q.device()).logical_not();
    const auto a = torch::softmax(torch::cat({s.masked_fill(future, -INFINITY), sigma}, -1), -1);
    const auto w = a.narrow(-1, 0, T);
    if (weights) *weights = w;
    return torch::matmul(w.to(v.scalar_type()), v) + sink_value(a.narrow(-1, T, 1), v);
  }

  torch::Tensor output_from_weights(const torch::Tensor& weights, const torch::Tensor& v,
                                    const torch::Tensor& x) override {
    const auto sink = 1.0 - weights.sum(-1, /*keepdim=*/true);  // the softmax's last column
    return AttentionVariantImpl::output_from_weights(weights, v, x) + sink_value(sink, v);
  }

  std::vector<LearnedStatistic> learned(const torch::Tensor& x) override {
    using Kind = LearnedStatistic::Kind;
    std::vector<LearnedStatistic> out;
    position_.learned(x, out);
    out.push_back({"k_bias_norm", "norm of the learned key |k'_h|", Kind::PerHead,
                   k_bias_.norm(2, {1})});
    out.push_back({"v_bias_norm", "norm of the learned value |v'_h|", Kind::PerHead,
                   v_bias_.norm(2, {1})});
    return out;
  }

 private:
  // a_sink [B, H, Tq, 1] times v' [H, D], in v's dtype.
  torch::Tensor sink_value(const torch::Tensor& a_sink, const torch::Tensor& v) const {
    const auto dtype = v.scalar_type();
    return a_sink.to(dtype) * v_bias_.to(dtype).view({1, v.size(1), 1, v.size(3)});
  }

  PositionScores position_;
  torch::Tensor k_bias_;  // k'_h [H, D]
  torch::Tensor v_bias_;  // v'_h [H, D]
};

VariantRegistration kv_bias_registration() {
  VariantRegistration r;
  r.schema = kv_bias_schema();
  r.factory = [](const VariantContext& ctx) { return std::make_shared<KvBiasAttentionImpl>(ctx); };
  r.parameter_count = [](const VariantContext& ctx) {  // k' and v', plus the position part's
    return 2 * ctx.n_head * ctx.head_dim + position_parameter_count(ctx);
  };
  return r;  // decays: none (biases, see above)
}

const RegisterVariant kv_bias(kv_bias_registration());

}  // namespace
}  // namespace attnbench::variants
