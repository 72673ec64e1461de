#include "model/lm_loss.h"

#include <ATen/Parallel.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cpu/row_reduce.h"

namespace attnbench::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// One chunk's rows of logits [n, V] with their targets [n, 1]: returns the sum over rows of
// lse - logit[target] and, with `gradient`, turns the logits in place into d(mean loss)/d logits =
// (softmax - onehot(target)) / N.
torch::Tensor softmax_rows(torch::Tensor& logits, const torch::Tensor& targets, int64_t N,
                           bool gradient) {
  const int64_t n = logits.size(0), V = logits.size(1);
  if (logits.is_cpu() && logits.scalar_type() == torch::kFloat32 && logits.is_contiguous()) {
    // The same in one read for the normaliser and one read-write for the gradient per row
    // (kernels/cpu/row_reduce.h), instead of a pass per tensor op.
    float* l = logits.data_ptr<float>();
    const torch::Tensor t = targets.contiguous();
    const int64_t* target = t.data_ptr<int64_t>();
    std::vector<double> row_loss(static_cast<size_t>(n));
    const float inv_n = 1.0f / static_cast<float>(N);
    at::parallel_for(0, n, 8, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        if (target[r] < 0 || target[r] >= V)
          throw std::out_of_range("chunked_cross_entropy: target " + std::to_string(target[r]) +
                                  " is outside the vocabulary of " + std::to_string(V));
        float* x = l + r * V;
        const float m = kernels::cpu::row_max(x, V);
        const double lse = m + std::log(kernels::cpu::sum_exp(x, V, m));
        row_loss[static_cast<size_t>(r)] = lse - x[target[r]];
        if (!gradient) continue;
        kernels::cpu::exp_shifted_scaled(x, V, static_cast<float>(lse), inv_n);
        x[target[r]] -= inv_n;
      }
    });
    double sum = 0;
    for (double x : row_loss) sum += x;
    return torch::tensor(sum, torch::kFloat64);
  }
  const torch::Tensor lse = torch::logsumexp(logits, 1, /*keepdim=*/true);
  const torch::Tensor loss = (lse - logits.gather(1, targets)).sum();
  if (gradient) {
    logits.sub_(lse).exp_();
    logits.scatter_add_(1, targets, torch::full({n, 1}, -1.0, logits.options()));
    logits.div_(static_cast<double>(N));
  }
  return loss;
}

struct ChunkedCrossEntropy : torch::autograd::Function<ChunkedCrossEntropy> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& h,
                               const torch::Tensor& weight, const torch::Tensor& targets,
                               int64_t chunk, bool grad_h, bool grad_weight) {
    const int64_t N = h.size(0);
    // float32 at least: a bf16 product's logits are read in float32, a float64 model's in float64.
    const auto acc = torch::promote_types(h.scalar_type(), torch::kFloat32);
    const auto acc_options = h.options().dtype(acc);
    const bool gradient = grad_h || grad_weight;
    torch::Tensor loss = torch::zeros({}, acc_options.dtype(torch::kFloat64));
    torch::Tensor dh = grad_h ? torch::empty_like(h) : torch::Tensor();
    torch::Tensor dw = grad_weight ? torch::zeros(weight.sizes(), acc_options) : torch::Tensor();
    for (int64_t c0 = 0; c0 < N; c0 += chunk) {
      const int64_t n = std::min(chunk, N - c0);
      const torch::Tensor hc = h.narrow(0, c0, n);
      // The chunk's logits in float32 (a bf16 product under autocast), as cross_entropy reads them.
      torch::Tensor logits = torch::mm(hc, weight.t()).to(acc);
      loss += softmax_rows(logits, targets.narrow(0, c0, n).unsqueeze(1), N, gradient).to(loss.device());
      if (grad_h) dh.narrow(0, c0, n).copy_(torch::mm(logits, weight.to(acc)));
      if (grad_weight) dw.addmm_(logits.t(), hc.to(acc));
    }
    ctx->save_for_backward({dh, grad_weight ? dw.to(weight.scalar_type()) : dw});
    return (loss / static_cast<double>(N)).to(acc);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& go = grad_outputs[0];
    auto scaled = [&](const torch::Tensor& g) {
      return g.defined() ? g * go.to(g.scalar_type()) : torch::Tensor();
    };
    return {scaled(saved[0]), scaled(saved[1]), {}, {}, {}, {}};
  }
};

}  // namespace

torch::Tensor chunked_cross_entropy(const torch::Tensor& h, const torch::Tensor& weight,
                                    const torch::Tensor& targets, int64_t chunk) {
  if (h.dim() != 2 || weight.dim() != 2 || h.size(1) != weight.size(1) || targets.dim() != 1 ||
      targets.size(0) != h.size(0) || chunk < 1) {
    throw std::invalid_argument("chunked_cross_entropy: expected h [N, C], weight [V, C], targets "
                                "[N] and chunk >= 1");
  }
  const bool grad = torch::GradMode::is_enabled();
  return ChunkedCrossEntropy::apply(h, weight, targets, chunk, grad && h.requires_grad(),
                                    grad && weight.requires_grad());
}

}  // namespace attnbench::model
