// The attention family as the kernels see it (DESIGN.md, backends): causal scores
//   s_ij = q_i . k_j / sqrt(D) + bias_h(i - j),   j <= i
// (RoPE, when used, is already applied to q and k), then either softmax or Elastic-Softmax
//   a_ij = ReLU(p_ij + t_ih),  p = causal softmax(s),  optional renormalisation a / sum_j a
// (a row whose sum is 0 outputs 0). The threshold p + t is computed in float32 at least.
//
// Variants (above) describe themselves with a FamilySpec and call a FusedKernel registered for the
// tensors' device, or fall back to their eager reference. Kernels (below) never see a variant.
#pragma once
#include <torch/torch.h>

#include <string>

namespace attnbench::kernels {

enum class Normalizer { Softmax, Elastic };

struct FamilySpec {
  // Additive score bias (each undefined when unused; both may be set):
  torch::Tensor alibi_slopes;   // [H]: bias = -slope_h * (i - j)
  torch::Tensor distance_bias;  // [H, W] learnable: bias = b[h, i - j] for i - j < W, else 0
  Normalizer normalizer = Normalizer::Softmax;
  // Elastic offset before the 1/n_i scale: [H] per head, or [B, T, H] per query token.
  torch::Tensor tau;
  bool tau_over_len = true;  // t_ih = tau / n_i with n_i = i + 1 keys visible; false: t_ih = tau
  bool renormalize = false;
};

// A fused implementation for one device type: a custom autograd function that returns the output
// [B, H, T, D] with gradients for q, k, v, tau and distance_bias.
struct FusedKernel {
  std::string name;
  torch::Tensor (*forward)(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                           const FamilySpec& spec);
};

void register_fused_kernel(torch::DeviceType device, FusedKernel kernel);
// nullptr when no fused kernel exists for `device` (then backend "auto" uses eager).
const FusedKernel* find_fused_kernel(torch::DeviceType device);

}  // namespace attnbench::kernels
