// A variant whose weights are a function of the scores alone: s [B, H, Tq, T] from q, k and the
// position part (eager_family_scores; future entries unmasked, float32 at least; row r is query
// position T - Tq + r) in, the causal weights a out, o = a v. Softpick and stick-breaking are this module with their function.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <vector>

#include "variants/position.h"
#include "variants/variant.h"

namespace attnbench::variants {

using ScoreNormalizer = std::function<torch::Tensor(const torch::Tensor& scores)>;

class ScoreNormalizerAttentionImpl : public AttentionVariantImpl {
 public:
  // The position part registers its parameters (a distance bias) on this module.
  ScoreNormalizerAttentionImpl(const VariantContext& ctx, ScoreNormalizer normalize);

  torch::Tensor forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor& x, torch::Tensor* weights = nullptr) override;

  // The position part's (the distance-bias profile, when there is one).
  std::vector<LearnedStatistic> learned(const torch::Tensor& x) override;

 private:
  PositionScores position_;
  ScoreNormalizer normalize_;
};

}  // namespace attnbench::variants
