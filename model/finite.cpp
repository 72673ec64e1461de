#include "model/finite.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace attnbench::model {

namespace {

// The NaN and infinite values of `t`, read in slices of 1M values: taken whole, torch's isfinite
// computes (t - t) == 0 through a temporary as large as t, and sum() widens its mask to int64 (8
// bytes a value), which made checking GPT-2's 154 MB embedding cost 460 MB more.
int64_t non_finite_values(const torch::Tensor& t) {
  const torch::Tensor flat = t.reshape({-1});
  constexpr int64_t kSlice = int64_t{1} << 20;
  int64_t bad = 0;
  for (int64_t at = 0; at < flat.numel(); at += kSlice) {
    const torch::Tensor slice = flat.narrow(0, at, std::min(kSlice, flat.numel() - at));
    const torch::Tensor finite = torch::isfinite(slice);
    if (!finite.all().item<bool>()) bad += slice.numel() - finite.sum().item<int64_t>();
  }
  return bad;
}

}  // namespace

std::string first_non_finite_tensor(const torch::nn::Module& m) {
  torch::NoGradGuard no_grad;
  const auto check = [](const std::string& name, const torch::Tensor& t) -> std::string {
    if (!t.defined() || !t.is_floating_point()) return "";
    const int64_t bad = non_finite_values(t);
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
