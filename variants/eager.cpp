#include "variants/eager.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "variants/elastic.h"

namespace attnbench::variants {
namespace {

// The weights a from the causal softmax p [B, H, Tq, T] (kernels/attention_family.h).
torch::Tensor normalize(const torch::Tensor& p, const kernels::FamilySpec& spec,
                        const torch::Tensor& causal) {
  const int64_t Tq = p.size(-2), first = p.size(-1) - Tq;
  switch (spec.normalizer) {  // no default: -Wswitch lists this site when a normaliser is added
    case kernels::Normalizer::Softmax:
      return p;
    case kernels::Normalizer::Elastic:
      return elastic_normalize(
          p, elastic_offsets(spec.tau, spec.tau_over_len, Tq, p.scalar_type(), first), causal,
          spec.renormalize);
  }
  throw std::logic_error("eager attention: normalizer " +
                         std::to_string(static_cast<int>(spec.normalizer)) +
                         " is not implemented");
}

// p_ij = e^{s_ij} / (e^{S_h} + sum_{k <= i} e^{s_ik}): the sink is one more logit in the softmax
// whose column is dropped (openai/gpt-oss sdpa(); softmax1 is S = 0).
torch::Tensor causal_softmax(const torch::Tensor& s, const torch::Tensor& causal,
                             const torch::Tensor& sink_logit) {
  const auto masked = s.masked_fill(causal.logical_not(), -INFINITY);
  if (!sink_logit.defined()) return torch::softmax(masked, -1);
  const int64_t B = s.size(0), H = s.size(1), Tq = s.size(2), T = s.size(3);
  const auto sink = sink_logit.to(s.scalar_type()).view({1, H, 1, 1}).expand({B, H, Tq, 1});
  return torch::softmax(torch::cat({masked, sink}, -1), -1).narrow(-1, 0, T);
}

}  // namespace

torch::Tensor causal_mask(int64_t Tq, int64_t T, const torch::Device& device) {
  return torch::ones({Tq, T}, torch::dtype(torch::kBool).device(device)).tril(T - Tq);
}

torch::Tensor causal_mask(int64_t T, const torch::Device& device) {
  return causal_mask(T, T, device);
}

torch::Tensor eager_family_scores(const torch::Tensor& q, const torch::Tensor& k,
                                  const kernels::FamilySpec& spec) {
  const int64_t H = q.size(1), Tq = q.size(2), T = k.size(2), D = q.size(3);
  const auto dtype = torch::promote_types(q.scalar_type(), torch::kFloat32);
  auto idx = torch::TensorOptions().dtype(torch::kLong).device(q.device());
  // i - j, with query row r at position i = T - Tq + r
  auto rel = torch::arange(T - Tq, T, idx).view({Tq, 1}) - torch::arange(T, idx).view({1, T});

  auto s = torch::matmul(q, k.transpose(-2, -1)).to(dtype) / std::sqrt(static_cast<double>(D));
  if (spec.alibi_slopes.defined()) {
    s = s - spec.alibi_slopes.to(dtype).view({1, H, 1, 1}) * rel.to(dtype);
  }
  if (spec.distance_bias.defined()) {
    const int64_t W = spec.distance_bias.size(1);
    auto in_window = (rel >= 0) & (rel < W);
    auto b = spec.distance_bias.to(dtype).index_select(1, rel.clamp(0, W - 1).flatten());
    s = s + (b.view({H, Tq, T}) * in_window).unsqueeze(0);  // no bias beyond W
  }
  if (spec.log_forget_cumsum.defined()) {  // sum_{l=j+1..i} log f_l = C_i - C_j
    const auto c = spec.log_forget_cumsum.to(dtype);  // [B, H, T]
    s = s + c.narrow(-1, T - Tq, Tq).unsqueeze(-1) - c.unsqueeze(-2);
  }
  return s;
}

torch::Tensor eager_family_attention(const torch::Tensor& q, const torch::Tensor& k,
                                     const torch::Tensor& v, const kernels::FamilySpec& spec,
                                     torch::Tensor* weights) {
  const auto causal = causal_mask(q.size(2), k.size(2), q.device());
  const auto p = causal_softmax(eager_family_scores(q, k, spec), causal, spec.sink_logit);
  const torch::Tensor a = normalize(p, spec, causal);
  if (weights) *weights = a;
  return torch::matmul(a.to(v.scalar_type()), v);
}

}  // namespace attnbench::variants
