// The Elastic-Softmax normaliser of the attention family (docs/variants.md, "Normalisers";
// docs/paper.md 1.3):
//   a_ij = ReLU(p_ij + t_ih),  p = causal softmax of the scores, j <= i,
// optionally renormalised a_ij / sum_j a_ij (a row whose sum is 0 outputs 0). The offset t_ih has
// one of three forms (the readings of the paper found in docs/paper.md 1.3; docs/variants.md):
//   per_head_over_len  t_ih = tau_h / n_i, n_i = i + 1 keys visible      (the paper's tau_h/seq_len)
//   per_token          t_ih = g_h(x_i) / n_i  (tau_scale inv_len) or g_h(x_i) (tau_scale none),
//                      g: linear d_model -> H, weight init 0, bias init tau_init
//   per_head_const     t_ih = tau_h                                     (the 6 Sep 2025 code form)
// Sign convention "+ t" with tau_init = -1 (the authors' post-review code): a weight survives only
// when it exceeds the uniform share 1/n_i.
#pragma once
#include <torch/torch.h>

#include <string>
#include <vector>

namespace attnbench::variants {

enum class TauForm { PerHeadOverLen, PerToken, PerHeadConst };
// Functions, not globals: schemas are built during static initialisation (variants/position.h).
const std::vector<std::string>& tau_forms();   // per_head_over_len, per_token, per_head_const
const std::vector<std::string>& tau_scales();  // inv_len, none
TauForm parse_tau_form(const std::string& form);

// The offsets t [B or 1, H, T, 1] in dtype `dtype` of the T queries at positions first..first+T-1,
// from tau [H] (per head) or [B, T, H] (per query token), divided by n_i = i + 1 when `over_len`.
torch::Tensor elastic_offsets(const torch::Tensor& tau, bool over_len, int64_t T,
                              torch::ScalarType dtype, int64_t first = 0);

// a = ReLU(p + t) with future keys (causal == false) forced to 0 even when t > 0, then the
// optional renormalisation. p [B, H, Tq, T], t broadcastable to it, causal [Tq, T] bool. The
// threshold is computed in p's dtype, which the caller makes at least float32 (docs/paper.md 1.3:
// in bf16, p + tau/i near tau = -1 rounds wrongly).
torch::Tensor elastic_normalize(const torch::Tensor& p, const torch::Tensor& t,
                                const torch::Tensor& causal, bool renormalize);

}  // namespace attnbench::variants
