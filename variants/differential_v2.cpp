// Differential Transformer V2 (Ye, Dong, Sun and Wei, Microsoft, January 2026; reference code
// microsoft/unilm, Diff-Transformer/Diff-Transformer-V2/multihead_flashdiffv2.py). Twice the query
// heads over the same key/value heads: head h has a second query q2 of the full head dimension D,
// from a projection of its own, in the same grouped-query group (its key/value head is h's), and
//   a_i = softmax(s1_i) - sigmoid(lambda_i^h) softmax(s2_i),   lambda_i = x_i W_lambda,
//   s_m = (R q_m) . (R k) / sqrt(D) + position biases,   o_i = a_i v,
// lambda one number per token and head from the layer's normed input x (W_lambda [H, d_model], no
// bias). A row of a sums to 1 - sigmoid(lambda), which lets a head output (almost) nothing where V1
// needed a sink to do so.
//
// What V2 drops from V1 (`differential`, variants/differential.cpp, kept as it was so that V1 runs
// reproduce): the halved q/k heads (V2's maps have the full D), the per-layer lambda
// exp(lq1 . lk1) - exp(lq2 . lk2) + lambda_init, the per-head RMSNorm and the (1 - lambda_init)
// factor. It is a variant of its own rather than a form of V1: the two share no parameter.
//
// Readings (docs/variants.md, "Sink cures"):
// - q2 = x W_q2, W_q2 [H * D, d_model], no bias, and W_lambda: N(0, model.init_std), the decoder's
//   own init for the q projection it extends; the reference leaves both at PyTorch's Linear
//   default, U(+-1/sqrt(d_model)). Both decay, as the model's projections. lambda starts near 0,
//   sigmoid(lambda) near 1/2.
// - The reference interleaves the 2H query heads (2h positive, 2h + 1 negative) in one flash call;
//   here q is the model's q_h and q2 the variant's, paired by h: the same pairing within a group.
// - RoPE rotates q2 as q; ALiBi or the distance bias, when chosen, add the same bias to both maps.
// It never starts as the pretrained model's attention (sigmoid(lambda) > 0 subtracts a share of a
// second map).
//
// This file is the whole variant; no fused kernel serves it (two calls of the softmax kernel and a
// subtraction would; not built).
#include <cmath>

#include "variants/eager.h"
#include "variants/position.h"
#include "variants/registry.h"

namespace attnbench::variants {
namespace {

config::VariantSchema differential_v2_schema() {
  config::VariantSchema s;
  s.name = "differential_v2";
  s.description = "differential attention V2: softmax(q k) - sigmoid(x W_lambda) softmax(q2 k), a "
                  "second full-width query per head, lambda per token and head (Ye et al. 2026), "
                  "RoPE";
  s.params = position_params(PositionDefaults{});
  s.checks = {check_rope};
  return s;  // kernels: none, eager only
}

class DifferentialV2AttentionImpl : public AttentionVariantImpl {
 public:
  explicit DifferentialV2AttentionImpl(const VariantContext& ctx)
      : position_(*this, ctx), n_head_(ctx.n_head), head_dim_(ctx.head_dim) {
    const auto linear = [&](const char* name, int64_t out) {
      auto l = register_module(name, torch::nn::Linear(torch::nn::LinearOptions(ctx.d_model, out).bias(false)));
      torch::NoGradGuard no_grad;
      l->weight.normal_(0.0, ctx.init_std);
      return l;
    };
    q2_proj_ = linear("q2_proj", ctx.n_head * ctx.head_dim);
    lambda_proj_ = linear("lambda_proj", ctx.n_head);
  }

  torch::Tensor forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor& x, torch::Tensor* weights) override {
    kernels::FamilySpec spec;
    position_.describe(spec, q.device());
    const int64_t B = q.size(0), Tq = q.size(2), T = k.size(2), first = T - Tq;
    const torch::Tensor xq = x.narrow(1, first, Tq);  // the queries' rows
    const torch::Tensor q2 =
        q2_proj_->forward(xq).view({B, Tq, n_head_, head_dim_}).transpose(1, 2).to(q.scalar_type());
    const auto future = causal_mask(Tq, T, q.device()).logical_not();
    const torch::Tensor kr = position_.rotate(k);
    const auto map = [&](const torch::Tensor& qm) {  // causal softmax, float32 at least
      const auto s = eager_family_scores(position_.rotate(qm, first), kr, spec);
      return torch::softmax(s.masked_fill(future, -INFINITY), -1);
    };
    const torch::Tensor p1 = map(q);
    const torch::Tensor a = p1 - lambda(xq).to(p1.scalar_type()) * map(q2);
    if (weights) *weights = a;
    return output_from_weights(a, v, x);
  }

  std::vector<LearnedStatistic> learned(const torch::Tensor& x) override {
    std::vector<LearnedStatistic> out;
    position_.learned(x, out);
    out.push_back({"lambda_mean", "mean sigmoid(x W_lambda) per head", LearnedStatistic::Kind::TokenMean,
                   torch::sigmoid(lambda_proj_->forward(x))});  // [B, T, H]
    return out;
  }

 private:
  // sigmoid(x W_lambda) of the queries' rows xq [B, Tq, C] as [B, H, Tq, 1].
  torch::Tensor lambda(const torch::Tensor& xq) {
    return torch::sigmoid(lambda_proj_->forward(xq)).permute({0, 2, 1}).unsqueeze(-1);
  }

  PositionScores position_;
  int64_t n_head_, head_dim_;
  torch::nn::Linear q2_proj_{nullptr};      // W_q2 [H * D, d_model]
  torch::nn::Linear lambda_proj_{nullptr};  // W_lambda [H, d_model]
};

VariantRegistration differential_v2_registration() {
  VariantRegistration r;
  r.schema = differential_v2_schema();
  r.factory = [](const VariantContext& ctx) { return std::make_shared<DifferentialV2AttentionImpl>(ctx); };
  r.parameter_count = [](const VariantContext& ctx) {
    return ctx.d_model * ctx.n_head * (ctx.head_dim + 1) + position_parameter_count(ctx);
  };
  r.decays = [](const std::string& name, const torch::Tensor&) {
    return name == "q2_proj.weight" || name == "lambda_proj.weight";
  };
  return r;  // pretrained_start: never
}

const RegisterVariant differential_v2_variant(differential_v2_registration());

}  // namespace
}  // namespace attnbench::variants
