#include "variants/elastic.h"

#include <stdexcept>

#include "kernels/family_tables.h"

namespace attnbench::variants {

const std::vector<std::string>& tau_forms() {
  static const std::vector<std::string> forms = {"per_head_over_len", "per_token",
                                                 "per_head_const"};
  return forms;
}

const std::vector<std::string>& tau_scales() {
  static const std::vector<std::string> scales = {"inv_len", "none"};
  return scales;
}

TauForm parse_tau_form(const std::string& form) {
  if (form == "per_head_over_len") return TauForm::PerHeadOverLen;
  if (form == "per_token") return TauForm::PerToken;
  if (form == "per_head_const") return TauForm::PerHeadConst;
  throw std::invalid_argument("unknown tau_form '" + form + "'");
}

torch::Tensor elastic_offsets(const torch::Tensor& tau, bool over_len, int64_t T,
                              torch::ScalarType dtype, int64_t first) {
  torch::Tensor t;
  if (tau.dim() == 1) {
    t = tau.to(dtype).view({1, -1, 1, 1});  // [1, H, 1, 1]
  } else {
    TORCH_CHECK(tau.dim() == 3 && tau.size(1) == T, "per-token tau must be [B, T, H]");
    t = tau.to(dtype).permute({0, 2, 1}).unsqueeze(-1);  // [B, H, T, 1]
  }
  if (over_len) {
    const auto opts = torch::TensorOptions().dtype(dtype).device(tau.device());
    t = t / kernels::visible_keys(T, opts, first).view({1, 1, T, 1});
  }
  return t;
}

torch::Tensor elastic_normalize(const torch::Tensor& p, const torch::Tensor& t,
                                const torch::Tensor& causal, bool renormalize) {
  auto a = torch::relu(p + t).masked_fill(causal.logical_not(), 0.0);
  if (!renormalize) return a;
  // A row whose weights are all 0 outputs 0: divide by 1 there, which also keeps its gradient
  // finite (a / where(sum > 0, sum, 0) would give 0/0 in the backward pass).
  auto sum = a.sum(-1, /*keepdim=*/true);
  return a / torch::where(sum > 0, sum, torch::ones_like(sum));
}

}  // namespace attnbench::variants
