#include "model/finite.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace attnbench::model {

std::string first_non_finite_tensor(const torch::nn::Module& m) {
  torch::NoGradGuard no_grad;
  const auto check = [](const std::string& name, const torch::Tensor& t) -> std::string {
    if (!t.defined() || !t.is_floating_point()) return "";
    const int64_t bad = t.numel() - torch::isfinite(t).sum().item<int64_t>();
    return bad == 0 ? "" : fmt::format("{} ({} of {} values)", name, bad, t.numel());
  };
  for (const auto& p : m.named_parameters()) {
    if (std::string bad = check(p.key(), p.value()); !bad.empty()) return bad;
  }
  for (const auto& b : m.named_buffers()) {
    if (std::string bad = check(b.key(), b.value()); !bad.empty()) return bad;
  }
  return "";
}

void require_finite_model(CausalLMImpl& m, const std::string& source) {
  if (std::string bad = first_non_finite_tensor(m); !bad.empty()) {
    throw std::runtime_error(source + ": tensor " + bad +
                             " is NaN or infinite: a diverged model is not scored");
  }
  torch::NoGradGuard no_grad;
  const LMShape s = m.shape();
  const int64_t T = std::min<int64_t>({16, s.context_length, s.vocab_size});
  const torch::Tensor idx =
      torch::arange(T, torch::TensorOptions().dtype(torch::kLong).device(m.device())).unsqueeze(0);
  const torch::Tensor logits = m.head(m.hidden(idx)).narrow(-1, 0, s.vocab_size);
  const torch::Tensor finite = torch::isfinite(logits).all(-1).squeeze(0).cpu();
  for (int64_t t = 0; t < T; ++t) {
    if (finite[t].item<bool>()) continue;
    throw std::runtime_error(fmt::format(
        "{}: its logits are NaN or infinite at position {} of a probe of {} tokens, though every "
        "weight is finite (an overflow): a diverged model is not scored",
        source, t, T));
  }
}

}  // namespace attnbench::model
