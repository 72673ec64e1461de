#include "variants/score_normalizer.h"

#include "variants/eager.h"

namespace attnbench::variants {

ScoreNormalizerAttentionImpl::ScoreNormalizerAttentionImpl(const VariantContext& ctx,
                                                           ScoreNormalizer normalize)
    : position_(*this, ctx), normalize_(std::move(normalize)) {}

torch::Tensor ScoreNormalizerAttentionImpl::forward(const torch::Tensor& q, const torch::Tensor& k,
                                                    const torch::Tensor& v, const torch::Tensor&,
                                                    torch::Tensor* weights) {
  kernels::FamilySpec spec;
  position_.describe(spec, q.device());
  const int64_t first = k.size(2) - q.size(2);  // the queries' first position
  const auto a =
      normalize_(eager_family_scores(position_.rotate(q, first), position_.rotate(k), spec));
  if (weights) *weights = a;
  return torch::matmul(a.to(v.scalar_type()), v);
}

std::vector<LearnedStatistic> ScoreNormalizerAttentionImpl::learned(const torch::Tensor& x) {
  std::vector<LearnedStatistic> out;
  position_.learned(x, out);
  return out;
}

}  // namespace attnbench::variants
