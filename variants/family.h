// The attention family (docs/variants.md) as one variant module: a position part (none | rope |
// alibi | distance_bias | rope+distance_bias), an optional score scale (SSMax) and forgetting gate,
// a normaliser (softmax, optionally with a sink logit; or elastic with its tau forms and optional
// renormalisation) and an optional output gate. Registered presets (variants/presets.cpp and one
// file per sink cure) differ only in their defaults; every part stays overridable in TOML through
// the schema built here.
//
// Learnable parameters (names as in named_parameters(); checkpoints keep these names). Only the
// projection matrices forget_proj.weight and gate_proj.weight take weight decay (like the model's
// other matrices); biases, the [H, W] distance-bias table, scales, logits and the elastic offsets
// (tau, and the per-token map, whose zero init is its neutral value) are not shrunk toward 0.
//   distance_bias      [H, W] float32, init 0               (position has distance_bias)
//   tau                [H] float32, init tau_init            (per_head_over_len, per_head_const)
//   tau_proj.weight    [H, d_model] init 0; tau_proj.bias [H] init tau_init   (per_token)
//   ssmax_scale        [H] float32, init ssmax_init          (score_scale = ssmax)
//   forget_proj.weight [H, d_model], forget_proj.bias [H]: PyTorch's Linear init   (forget_gate)
//   sink_logit         [H] float32, init sink_init           (sink = learned)
//   gate_proj.weight   [H or H*D, d_model] ~ N(0, init_std), no bias             (output_gate)
// Learned statistics (learned()): "tau" [H] or "tau_offset_mean" (g_h(x) per token, averaged over
// the text), the "distance_bias" profile b[h, r], "ssmax_scale", "sink_logit", and the mean gate
// values "forget_gate_mean" (f_t) and "output_gate_mean" per head.
#pragma once
#include <torch/torch.h>

#include <string>

#include "core/config/attention_schema.h"
#include "kernels/attention_family.h"
#include "variants/elastic.h"
#include "variants/position.h"
#include "variants/registry.h"
#include "variants/variant.h"

namespace attnbench::variants {

// A preset's defaults for the family's parameters.
struct FamilyDefaults {
  PositionDefaults position;
  std::string normalizer = "softmax";
  std::string tau_form = "per_head_over_len";
  double tau_init = -1.0;
  std::string tau_scale = "inv_len";
  bool renormalize = false;
  std::string sink = "none";          // none | zero (softmax1) | learned (gpt-oss)
  double sink_init = 0.0;
  std::string score_scale = "none";   // none | ssmax
  double ssmax_init = 0.43;
  bool forget_gate = false;
  std::string output_gate = "none";   // none | headwise | elementwise
};

// The full family parameter schema with a preset's defaults; applies_if drops what is irrelevant
// (e.g. tau_form under softmax) from the resolved config.
config::VariantSchema family_schema(std::string name, std::string description,
                                    const FamilyDefaults& defaults);

// A preset's registration: family_schema (with the RoPE head-dimension check), the family module,
// its closed-form parameter count and decay rule; fused per call (each kernel's supports check).
VariantRegistration family_registration(std::string name, std::string description,
                                        const FamilyDefaults& defaults);

// The family's own parameters in one layer: distance_bias H*W (position has distance_bias, W =
// bias_window); elastic tau: H (per_head_over_len, per_head_const) or (C + 1)*H (per_token:
// linear C -> H); ssmax_scale H; forget_proj (C + 1)*H; sink_logit H (learned); gate_proj C*H
// (headwise) or C*H*D (elementwise).
int64_t family_parameter_count(const VariantContext& ctx);

class FamilyAttentionImpl : public AttentionVariantImpl {
 public:
  explicit FamilyAttentionImpl(const VariantContext& ctx);

  torch::Tensor forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor& x, torch::Tensor* weights = nullptr) override;

  // weights @ v, times the output gate when there is one.
  torch::Tensor output_from_weights(const torch::Tensor& weights, const torch::Tensor& v,
                                    const torch::Tensor& x) override;

  std::vector<LearnedStatistic> learned(const torch::Tensor& x) override;

  // The kernel-level description of this layer for queries on `device` at positions first..T-1
  // of the hidden input x [B, T, C] (the per-token tau form reads the queries' rows, the
  // forgetting gate every row).
  kernels::FamilySpec spec(const torch::Tensor& x, const torch::Device& device, int64_t first = 0);

 private:
  void init_normalizer(const VariantContext& ctx);
  void init_cures(const VariantContext& ctx);
  // q_i at positions first.. scaled by c_h log n_i (SSMax), else q.
  torch::Tensor scale_scores(const torch::Tensor& q, int64_t first) const;
  // sigmoid(x W_g) of the last Tq positions of x [B, T, C], as [B, H, Tq, 1] (headwise) or
  // [B, H, Tq, D] (elementwise); undefined without a gate.
  torch::Tensor output_gate(const torch::Tensor& x, int64_t Tq);

  std::string backend_;
  std::string variant_;  // the registered name, for dispatch messages
  int64_t n_head_ = 0, head_dim_ = 0;
  PositionScores position_;
  kernels::Normalizer normalizer_ = kernels::Normalizer::Softmax;
  TauForm tau_form_ = TauForm::PerHeadOverLen;
  bool tau_over_len_ = true;
  bool renormalize_ = false;
  torch::Tensor tau_;
  torch::nn::Linear tau_proj_{nullptr};
  torch::Tensor ssmax_scale_;
  torch::nn::Linear forget_proj_{nullptr};
  torch::Tensor sink_logit_;  // a parameter (learned) or a constant 0 [H] (zero), moved to q's device
  bool sink_learned_ = false;
  bool headwise_gate_ = false;
  torch::nn::Linear gate_proj_{nullptr};
};

std::shared_ptr<AttentionVariantImpl> make_family_variant(const VariantContext& ctx);

// Backend dispatch (docs/kernels.md, "Dispatch"), the one place that picks eager or fused for any
// variant. `kernel`: the fused kernel registered for the inputs' `device` (nullptr: none);
// `unsupported`: why it cannot compute this call ("" when it can; FusedKernel::unsupported, or a
// variant outside the family's own reason); `unvalidated`: why "auto" should not pick it yet
// (FusedKernel::unvalidated, "" when it should); `eager_needed`: the call needs the eager path
// whatever the backend (its weights are requested: only eager materialises them; or it has fewer
// queries than keys, an incremental decoding step, and the kernel computes the square training
// problem only: FusedKernel::query_offset). Rules:
//   eager_needed, or "eager"       -> eager;
//   "auto"                         -> `kernel` when it exists, supports the call and is validated
//                                     for it, else eager;
//   "fused"                        -> `kernel`, or a UsageError naming `variant`, `device` and what
//                                     is missing, suggesting "auto" or "eager".
// Returns the kernel to run, nullptr for eager; an unknown backend is a UsageError.
const kernels::FusedKernel* choose_fused_kernel(const std::string& backend,
                                                const std::string& variant,
                                                const std::string& device,
                                                const kernels::FusedKernel* kernel,
                                                const std::string& unsupported,
                                                bool eager_needed,
                                                const std::string& unvalidated = "");

// The same for a call of the family: looks up the kernel for q's device in `registry` and asks it
// whether it supports (q, k, v, spec); the eager path is needed when `weights_requested`, or when q
// has fewer positions than k and the kernel takes no query offset.
const kernels::FusedKernel* choose_fused_kernel(
    const std::string& backend, const std::string& variant, const torch::Tensor& q,
    const torch::Tensor& k, const torch::Tensor& v, const kernels::FamilySpec& spec,
    bool weights_requested,
    const Registry<kernels::FusedKernel>& registry = kernels::fused_kernels());

}  // namespace attnbench::variants
