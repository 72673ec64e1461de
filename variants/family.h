// The attention family of DESIGN.md as one variant module: a position part (none | rope | alibi |
// distance_bias | rope+distance_bias) and a normaliser (softmax | elastic with its tau forms and
// optional renormalisation). Registered presets (variants/presets.cpp) differ only in their
// defaults; every part stays overridable in TOML through the schema built here.
//
// Learnable parameters (names as in named_parameters(), read by diagnostics):
//   distance_bias    [H, W] float32, init 0                    (position has distance_bias)
//   tau              [H] float32, init tau_init                 (per_head_over_len, per_head_const)
//   tau_proj.weight  [H, d_model] init 0; tau_proj.bias [H] init tau_init       (per_token)
#pragma once
#include <torch/torch.h>

#include <string>

#include "core/config/attention_schema.h"
#include "kernels/attention_family.h"
#include "variants/elastic.h"
#include "variants/position.h"
#include "variants/variant.h"

namespace attnbench::variants {

// A preset's defaults for the family's parameters.
struct FamilyDefaults {
  std::string position = "rope";
  double rope_theta = 10000.0;
  int64_t bias_window = 1024;
  std::string normalizer = "softmax";
  std::string tau_form = "per_head_over_len";
  double tau_init = -1.0;
  std::string tau_scale = "inv_len";
  bool renormalize = false;
};

// The full family parameter schema with a preset's defaults; applies_if drops what is irrelevant
// (e.g. tau_form under softmax) from the resolved config.
config::VariantSchema family_schema(std::string name, std::string description,
                                    const FamilyDefaults& defaults);

class FamilyAttentionImpl : public AttentionVariantImpl {
 public:
  explicit FamilyAttentionImpl(const VariantContext& ctx);

  torch::Tensor forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor& x, torch::Tensor* weights = nullptr) override;

  // The kernel-level description of this layer for queries on `device` and hidden input
  // x [B, T, C] (read only by the per-token tau form).
  kernels::FamilySpec spec(const torch::Tensor& x, const torch::Device& device);

 private:
  std::string backend_;
  PositionParts position_;
  double rope_theta_ = 0.0;
  torch::Tensor alibi_slopes_;  // [H] float64, a constant (not a parameter or checkpointed buffer)
  torch::Tensor distance_bias_;
  kernels::Normalizer normalizer_ = kernels::Normalizer::Softmax;
  TauForm tau_form_ = TauForm::PerHeadOverLen;
  bool tau_over_len_ = true;
  bool renormalize_ = false;
  torch::Tensor tau_;
  torch::nn::Linear tau_proj_{nullptr};
};

std::shared_ptr<AttentionVariantImpl> make_family_variant(const VariantContext& ctx);

// Backend dispatch (DESIGN.md): "eager" -> eager; "fused" -> `available` (the fused kernel
// registered for the tensors' device) or a UsageError naming `device` when there is none; "auto" ->
// `available` when it exists, else eager. Requested weights always take eager (only it
// materialises them). Returns the kernel to run, nullptr for eager.
const kernels::FusedKernel* choose_fused_kernel(const std::string& backend,
                                                const kernels::FusedKernel* available,
                                                const std::string& device, bool weights_requested);

}  // namespace attnbench::variants
