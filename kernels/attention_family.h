// The attention family as the kernels see it (docs/kernels.md, "The function"): causal scores
//   s_ij = q_i . k_j / sqrt(D) + bias_h(i - j) [+ C_i - C_j, a forgetting gate],   j <= i
// (RoPE, when used, is already applied to q and k), then either softmax (optionally with a sink
// logit in its denominator) or Elastic-Softmax
//   a_ij = ReLU(p_ij + t_ih),  p = causal softmax(s),  optional renormalisation a / sum_j a
// (a row whose sum is 0 outputs 0). The threshold p + t is computed in float32 at least.
//
// Variants (above) describe themselves with a FamilySpec and call a FusedKernel registered for the
// tensors' device, or fall back to their eager reference. Kernels (below) never see a variant.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <string>

#include "core/common/registry.h"

namespace attnbench::kernels {

// Code that depends on the normaliser switches on it without a default, so that -Wswitch (-Wall)
// lists every site to decide when a normaliser is added; a fused kernel reports one it does not
// implement through FusedKernel::unsupported, so dispatch falls back to eager instead of running
// it as softmax.
enum class Normalizer { Softmax, Elastic };

struct FamilySpec {
  // Additive score bias (each undefined when unused; both may be set):
  torch::Tensor alibi_slopes;   // [H]: bias = -slope_h * (i - j)
  torch::Tensor distance_bias;  // [H, W] learnable: bias = b[h, i - j] for i - j < W, else 0
  // Forgetting gate (Lin et al. 2025): C [B, H, T], C_t = sum_{l <= t} log f_l; the score gains
  // sum_{l = j+1..i} log f_l = C_i - C_j. Undefined when unused.
  torch::Tensor log_forget_cumsum;
  Normalizer normalizer = Normalizer::Softmax;
  // Elastic offset before the 1/n_i scale: [H] per head, or [B, T, H] per query token.
  torch::Tensor tau;
  bool tau_over_len = true;  // t_ih = tau / n_i with n_i = i + 1 keys visible; false: t_ih = tau
  bool renormalize = false;
  // A sink logit S_h [H] in the softmax's denominator with no value (softmax1: S = 0; gpt-oss: S_h
  // learned): p_ij = e^{s_ij} / (e^{S_h} + sum_k e^{s_ik}), so o = o_softmax * sigmoid(lse_i - S_h).
  // Undefined when unused.
  torch::Tensor sink_logit;
};

// A fused implementation for one device: a custom autograd function that returns the output
// [B, H, Tq, D] of the queries q [B, H, Tq, D] over k, v [B, H, T, D], with gradients for q, k, v,
// tau and distance_bias.
using FusedForward = std::function<torch::Tensor(const torch::Tensor& q, const torch::Tensor& k,
                                                 const torch::Tensor& v, const FamilySpec& spec)>;
// Why a kernel cannot compute `spec` on these inputs (e.g. "elastic tau must be [H] or [B, T, H],
// got [3, 2]"), "" when it can.
using FusedLimits = std::function<std::string(const torch::Tensor& q, const torch::Tensor& k,
                                              const torch::Tensor& v, const FamilySpec& spec)>;

struct FusedKernel {
  std::string name;
  FusedForward forward;
  // What the kernel serves: the dtypes, shapes and spec features its code handles. Dispatch asks
  // before every call (variants/family.h, choose_fused_kernel), so that "auto" falls back to eager
  // and "fused" refuses instead of computing something else.
  FusedLimits unsupported;
  // Optional: why backend "auto" should not run this kernel on these inputs yet although it could,
  // "" when it should (a code path that has not passed its tests on real hardware, e.g. the CUDA
  // Elastic kernel until a GPU has run them). "fused" runs it anyway: opting in is the user's.
  FusedLimits unvalidated;
  // Whether the kernel computes queries at the last Tq < T positions (an incremental decoding
  // step); a kernel without it gets only square calls (Tq = T), the others run eager under every
  // backend.
  bool query_offset = false;

  bool supports(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                const FamilySpec& spec) const {
    return unsupported(q, k, v, spec).empty();
  }
};

// The fused kernels, keyed by device type name as c10::DeviceTypeName(type, true) spells it
// ("cpu", "cuda"); at most one per device, a second registration is recorded as an error
// (core/common/registry.h).
Registry<FusedKernel>& fused_kernels();

// Adds `kernel` for `device` (e.g. "cpu"), from the kernel's own file at static initialisation.
void register_fused_kernel(const std::string& device, FusedKernel kernel);
// nullptr when no fused kernel exists for `device` (then backend "auto" uses eager).
const FusedKernel* find_fused_kernel(torch::DeviceType device);

}  // namespace attnbench::kernels
