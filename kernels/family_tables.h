// The tables every fused kernel of the family reads instead of the variant's parameters, and the
// parameter gradients from what its backward returns (docs/kernels.md, "The function"). Shared by
// the CPU kernel (kernels/cpu) and the CUDA kernel (kernels/cuda), so both compute the bias, the
// threshold and the parameter gradients the same way; header-only, because kernels/cpu and
// kernels/cuda are linked whole into ab_kernels and reach nothing defined after them.
#pragma once
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "kernels/attention_family.h"

namespace attnbench::kernels {

// bias[h, d] for d = i - j in [0, T): -slope_h d (ALiBi) + b[h, d] for d < W (distance bias; 0
// beyond W, docs/paper.md 1.2). Undefined when the family has no positional bias.
inline torch::Tensor bias_table(const torch::Tensor& alibi, const torch::Tensor& db, int64_t H,
                                int64_t T_len, torch::ScalarType dtype, torch::Device device) {
  if (!alibi.defined() && !db.defined()) return {};
  auto opts = torch::TensorOptions().dtype(dtype).device(device);
  auto table = torch::zeros({H, T_len}, opts);
  if (alibi.defined())
    table -= alibi.detach().to(opts).view({H, 1}) * torch::arange(T_len, opts).view({1, T_len});
  if (db.defined()) {
    const int64_t w = std::min(db.size(1), T_len);
    table.narrow(1, 0, w) += db.detach().to(opts).narrow(1, 0, w);
  }
  return table.contiguous();
}

// n_i = i + 1 keys are visible to query i (docs/paper.md 1.3: tau / i with 1-based i), for the
// T_len queries at positions first .. first + T_len - 1 (first > 0: incremental decoding).
inline torch::Tensor visible_keys(int64_t T_len, const torch::TensorOptions& opts,
                                  int64_t first = 0) {
  return torch::arange(first + 1, first + T_len + 1, opts);
}

// t[b, h, i] = tau / n_i or tau, [B, H, Tq] for the Tq queries at positions first .. first + Tq - 1,
// float32 at least (the ReLU threshold p + t is ill-conditioned near tau = -1, docs/paper.md 1.3
// (c)); tau is [H] or [B, Tq, H].
inline torch::Tensor threshold_table(const torch::Tensor& tau, bool over_len, int64_t B, int64_t H,
                                     int64_t Tq, torch::ScalarType dtype, torch::Device device,
                                     int64_t first = 0) {
  const auto opts = torch::TensorOptions().dtype(dtype).device(device);
  auto t = tau.detach().to(opts);
  if (t.dim() == 1) {
    t = t.view({1, H, 1}).expand({B, H, Tq});
  } else {
    t = t.permute({0, 2, 1});  // [B, Tq, H] -> [B, H, Tq]
  }
  if (over_len) t = t / visible_keys(Tq, opts, first).view({1, 1, Tq});
  return t.contiguous();
}

// The gradients of tau, the distance bias and the ALiBi slopes (each undefined when that parameter
// is), in each parameter's dtype, from a kernel's dthresh [B, H, Tq] = dl/dt_i of the queries at
// positions first.. and dbias_bh [B, H, T] = the sum of dS along each diagonal d = i - j
// (undefined without a position bias).
struct ParameterGrads {
  torch::Tensor tau, distance_bias, alibi_slopes;
};

inline ParameterGrads parameter_grads(const torch::Tensor& dthresh, const torch::Tensor& dbias_bh,
                                      const torch::Tensor& tau, const torch::Tensor& db,
                                      const torch::Tensor& alibi, bool over_len,
                                      int64_t first = 0) {
  ParameterGrads g;
  if (dthresh.defined() && tau.defined()) {
    const int64_t Tq = dthresh.size(2);
    auto dt = over_len ? dthresh / visible_keys(Tq, dthresh.options(), first).view({1, 1, Tq})
                       : dthresh;
    g.tau = (tau.dim() == 1 ? dt.sum(torch::IntArrayRef{0, 2}) : dt.permute({0, 2, 1}))
                .to(tau.scalar_type());
  }
  if (!dbias_bh.defined()) return g;
  const int64_t T_len = dbias_bh.size(2);
  auto per_distance = dbias_bh.sum(0);  // [H, T]: sum of dS over each diagonal d = i - j
  if (db.defined()) {
    g.distance_bias = torch::zeros(db.sizes(), db.options());
    const int64_t w = std::min(db.size(1), T_len);
    g.distance_bias.narrow(1, 0, w).copy_(per_distance.narrow(1, 0, w));
  }
  if (alibi.defined())  // d(-slope d)/dslope = -d
    g.alibi_slopes =
        -(per_distance * torch::arange(T_len, per_distance.options()).view({1, T_len}))
             .sum(1)
             .to(alibi.scalar_type());
  return g;
}

// "[2, 3]": a shape for messages.
inline std::string shape_of(const torch::Tensor& t) {
  std::string s = "[";
  for (int64_t d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.size(d));
  return s + "]";
}

// Why a kernel cannot take the spec's parameters for queries q [B, H, Tq, *] over keys [B, H, T, *],
// "" when it can: ALiBi slopes [H], a distance bias [H, W >= 1], a forgetting gate's C [B, H, T], a
// sink logit [H] with softmax only, and for Elastic-Softmax tau [H] or [B, Tq, H]; a normaliser
// that is not handled here is unsupported. Devices, and the features a kernel lacks, are each
// kernel's own check.
inline std::string unsupported_parameters(const FamilySpec& spec, int64_t B, int64_t H,
                                          int64_t Tq, int64_t T_len) {
  if (spec.alibi_slopes.defined() && !spec.alibi_slopes.sizes().equals({H}))
    return "alibi_slopes must be [H]";
  if (spec.distance_bias.defined() &&
      (spec.distance_bias.dim() != 2 || spec.distance_bias.size(0) != H ||
       spec.distance_bias.size(1) < 1))
    return "distance_bias must be [H, W] with W >= 1";
  if (spec.log_forget_cumsum.defined() && !spec.log_forget_cumsum.sizes().equals({B, H, T_len}))
    return "the forgetting gate's log_forget_cumsum must be [B, H, T]";
  if (spec.sink_logit.defined() && !spec.sink_logit.sizes().equals({H}))
    return "sink_logit must be [H]";
  if (spec.sink_logit.defined() && spec.normalizer != Normalizer::Softmax)
    return "a sink logit is implemented with softmax only";
  switch (spec.normalizer) {  // no default: a new normaliser is unsupported until handled here
    case Normalizer::Softmax:
      return "";
    case Normalizer::Elastic:
      if (!spec.tau.defined()) return "elastic tau must be [H] or [B, Tq, H], got none";
      if (spec.tau.sizes().equals({H}) || spec.tau.sizes().equals({B, Tq, H})) return "";
      return "elastic tau must be [H] or [B, Tq, H], got " + shape_of(spec.tau);
  }
  return "normalizer " + std::to_string(static_cast<int>(spec.normalizer)) + " is not implemented";
}

// What the spec asks for that no CUDA kernel implements yet ("" when nothing): the forgetting gate
// and sink logits run eager on the GPU (backend "auto"), fused only on the CPU.
inline std::string cuda_missing_feature(const FamilySpec& spec) {
  if (spec.log_forget_cumsum.defined())
    return "the forgetting gate has no CUDA kernel yet; backend \"auto\" runs it eager";
  if (spec.sink_logit.defined())
    return "sink logits have no CUDA kernel yet; backend \"auto\" runs them eager";
  return "";
}

}  // namespace attnbench::kernels
