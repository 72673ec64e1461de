// The contract of an attention variant (DESIGN.md, variant registry). A variant receives q, k, v of
// shape [B, H, T, D] (projections done, no positional encoding applied yet) and the layer's hidden
// input x [B, T, C] (for data-dependent parameters such as per-token tau) and returns the attention
// output [B, H, T, D]. The model never knows which variant it runs.
#pragma once
#include <torch/torch.h>

#include "core/config/run_config.h"

namespace attnbench::variants {

struct VariantContext {
  int64_t n_head = 0;
  int64_t head_dim = 0;
  int64_t d_model = 0;
  int64_t context_length = 0;
  config::AttentionConfig attention;  // resolved: every applicable parameter present
};

class AttentionVariantImpl : public torch::nn::Module {
 public:
  ~AttentionVariantImpl() override = default;

  // When `weights` is non-null the variant also stores its post-normaliser attention weights
  // [B, H, T, T] there (for diagnostics; computed by the eager path).
  virtual torch::Tensor forward(const torch::Tensor& q, const torch::Tensor& k,
                                const torch::Tensor& v, const torch::Tensor& x,
                                torch::Tensor* weights = nullptr) = 0;
};

}  // namespace attnbench::variants
