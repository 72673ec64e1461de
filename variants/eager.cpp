#include "variants/eager.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "variants/elastic.h"

namespace attnbench::variants {
namespace {

// The weights a from the causal softmax p [B, H, T, T] (kernels/attention_family.h).
torch::Tensor normalize(const torch::Tensor& p, const kernels::FamilySpec& spec,
                        const torch::Tensor& causal) {
  switch (spec.normalizer) {  // no default: -Wswitch lists this site when a normaliser is added
    case kernels::Normalizer::Softmax:
      return p;
    case kernels::Normalizer::Elastic:
      return elastic_normalize(
          p, elastic_offsets(spec.tau, spec.tau_over_len, p.size(-1), p.scalar_type()), causal,
          spec.renormalize);
  }
  throw std::logic_error("eager attention: normalizer " +
                         std::to_string(static_cast<int>(spec.normalizer)) +
                         " is not implemented");
}

}  // namespace

torch::Tensor eager_family_attention(const torch::Tensor& q, const torch::Tensor& k,
                                     const torch::Tensor& v, const kernels::FamilySpec& spec,
                                     torch::Tensor* weights) {
  const int64_t H = q.size(1), T = q.size(2), D = q.size(3);
  const auto dtype = torch::promote_types(q.scalar_type(), torch::kFloat32);
  auto idx = torch::TensorOptions().dtype(torch::kLong).device(q.device());
  auto rel = torch::arange(T, idx).view({T, 1}) - torch::arange(T, idx).view({1, T});  // i - j
  auto causal = rel >= 0;

  auto s = torch::matmul(q, k.transpose(-2, -1)).to(dtype) / std::sqrt(static_cast<double>(D));
  if (spec.alibi_slopes.defined()) {
    s = s - spec.alibi_slopes.to(dtype).view({1, H, 1, 1}) * rel.to(dtype);
  }
  if (spec.distance_bias.defined()) {
    const int64_t W = spec.distance_bias.size(1);
    auto in_window = causal & (rel < W);
    auto b = spec.distance_bias.to(dtype).index_select(1, rel.clamp(0, W - 1).flatten());
    s = s + (b.view({H, T, T}) * in_window).unsqueeze(0);  // no bias beyond W
  }
  auto p = torch::softmax(s.masked_fill(causal.logical_not(), -INFINITY), -1);

  const torch::Tensor a = normalize(p, spec, causal);
  if (weights) *weights = a;
  return torch::matmul(a.to(v.scalar_type()), v);
}

}  // namespace attnbench::variants
