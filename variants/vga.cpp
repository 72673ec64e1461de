// Value-State Gated Attention, VGA (Bu et al. 2025, "Value-State Gated Attention for Mitigating
// Extreme-Token Phenomena in Transformers", arXiv 2510.09017, eqs. 4 and 6): each key's value is
// scaled by a sigmoid gate computed from the value states themselves before the weighted sum,
//   o_i = sum_j a_ij g_j v_j,   g_j = sigmoid(V_j W_g + b),   a = causal softmax with RoPE,
// one gate per key token and head, V_j the token's values of all heads together, W_g [h, d_v].
// The paper's argument: a sink head parks its attention on a token whose value has collapsed
// toward 0; the gradient reaching that value is scaled by its gate, so closing g_sink breaks the
// loop between the sink and the drained value state (its eqs. 7-8).
//
// Readings (docs/variants.md, "Sink cures"; no code is published):
// - The gate acts on each key's value (the main text's eqs. 4 and 6 and its gradient argument). The
//   paper's appendix B writes the multi-head form as the query row's gate times the head output
//   instead; that form is not built.
// - V_j is the token's values of the n_kv_head key/value heads (grouped-query attention: each
//   value head once, not repeated), W_g [H, n_kv_head * D] ~ N(0, model.init_std) with weight
//   decay, as attnbench's other gate projections; a bias b [H] at 0 (not stated in the paper; its
//   setup follows Bondarenko et al. 2023, whose gates have one), so the gates start near 1/2.
// - The exposed weights are the softmax's a; output_from_weights applies the gate to v.
// It never starts as the pretrained model's attention: at W_g = 0 every value is halved.
//
// The attention itself is the family's (softmax, RoPE, any option) on its fused kernels, given the
// gated values; the gate depends on the key's own value only, so incremental decoding holds. The
// gates are a function of v, which learned() (given x) cannot compute: none are recorded.
#include "variants/family.h"

namespace attnbench::variants {
namespace {

// The family at its defaults: softmax with RoPE.
FamilyDefaults vga_defaults() {
  FamilyDefaults d;
  return d;
}

class VgaAttentionImpl : public FamilyAttentionImpl {
 public:
  explicit VgaAttentionImpl(const VariantContext& ctx)
      : FamilyAttentionImpl(ctx), kv_heads_(ctx.n_kv_head > 0 ? ctx.n_kv_head : ctx.n_head) {
    gate_ = register_module("value_gate", torch::nn::Linear(kv_heads_ * ctx.head_dim, ctx.n_head));
    torch::NoGradGuard no_grad;
    gate_->weight.normal_(0.0, ctx.init_std);
    gate_->bias.zero_();
  }

  torch::Tensor forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor& x, torch::Tensor* weights) override {
    return FamilyAttentionImpl::forward(q, k, gated(v), x, weights);
  }

  torch::Tensor output_from_weights(const torch::Tensor& weights, const torch::Tensor& v,
                                    const torch::Tensor& x) override {
    return FamilyAttentionImpl::output_from_weights(weights, gated(v), x);
  }

 private:
  // g_j v_j for v [B, H, T, D] (each key/value head repeated H / n_kv_head times).
  torch::Tensor gated(const torch::Tensor& v) {
    const int64_t B = v.size(0), H = v.size(1), T = v.size(2), D = v.size(3);
    const torch::Tensor heads = torch::arange(0, H, H / kv_heads_, torch::TensorOptions().device(v.device()));
    const torch::Tensor values = v.index_select(1, heads).transpose(1, 2).reshape({B, T, kv_heads_ * D});
    const torch::Tensor g = torch::sigmoid(gate_->forward(values.to(gate_->weight.scalar_type())));  // [B, T, H]
    return v * g.permute({0, 2, 1}).unsqueeze(-1).to(v.scalar_type());
  }

  int64_t kv_heads_;
  torch::nn::Linear gate_{nullptr};  // value_gate: W_g [H, n_kv_head * D], b [H]
};

VariantRegistration vga_registration() {
  VariantRegistration r = family_registration(
      "vga",
      "value-state gated attention (VGA): each key's value times sigmoid(V_j W_g), the gate "
      "computed from the value states (Bu et al. 2025), softmax, RoPE",
      vga_defaults());
  r.factory = [](const VariantContext& ctx) { return std::make_shared<VgaAttentionImpl>(ctx); };
  r.parameter_count = [](const VariantContext& ctx) {
    const int64_t kv = ctx.n_kv_head > 0 ? ctx.n_kv_head : ctx.n_head;
    return family_parameter_count(ctx) + (kv * ctx.head_dim + 1) * ctx.n_head;
  };
  const DecayRule family = r.decays;
  r.decays = [family](const std::string& name, const torch::Tensor& p) {
    return name == "value_gate.weight" || family(name, p);
  };
  r.pretrained_start = [](const config::AttentionConfig&) {
    return std::string("the value gate sigmoid(V W_g + b) scales every value (by 1/2 at W_g = 0)");
  };
  return r;
}

const RegisterVariant vga_variant(vga_registration());

}  // namespace
}  // namespace attnbench::variants
