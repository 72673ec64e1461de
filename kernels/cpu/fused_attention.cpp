#include "kernels/cpu/fused_attention.h"

#include <stdexcept>
#include <string>

#include "kernels/autograd_args.h"
#include "kernels/cpu/family_kernel.h"
#include "kernels/family_tables.h"

namespace attnbench::kernels::cpu {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

template <typename T>
FamilyProblem<T> problem(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                         const torch::Tensor& bias, const torch::Tensor& forget,
                         const torch::Tensor& thresh, bool elastic, bool renormalize,
                         TileGemm gemm) {
  FamilyProblem<T> p;
  p.B = q.size(0), p.H = q.size(1), p.T_len = k.size(2), p.D = q.size(3);
  p.first = k.size(2) - q.size(2);
  p.q = q.data_ptr<T>(), p.k = k.data_ptr<T>(), p.v = v.data_ptr<T>();
  p.bias = bias.defined() ? bias.data_ptr<T>() : nullptr;
  p.forget = forget.defined() ? forget.data_ptr<T>() : nullptr;
  p.thresh = elastic ? thresh.data_ptr<T>() : nullptr;
  p.elastic = elastic, p.renormalize = renormalize, p.gemm = gemm;
  return p;
}

// Whether the kernel runs the ReLU threshold pass (family_kernel.h); unsupported_inputs has refused
// any other normaliser before this is asked.
bool is_elastic(Normalizer n) {
  switch (n) {
    case Normalizer::Softmax:
      return false;
    case Normalizer::Elastic:
      return true;
  }
  throw std::logic_error("fused CPU attention: unknown normalizer");
}


// A sink logit S_h (kernels/attention_family.h) scales the softmax weights of the sequence by
// g_i = e^{lse_i} / (e^{lse_i} + e^{S_h}) = sigmoid(lse_i - S_h), so o = g_i o_softmax. Its backward
// is the softmax backward run with dO' = g dO and the final o: its delta = dO' . o = g dO . o is the
// softmax delta minus dL/dlse_i = (1 - g_i) dO_i . o_i, the lse path. dS_h = -sum_i (1 - g_i) dO_i . o_i.
torch::Tensor sink_share(const torch::Tensor& lse, const torch::Tensor& sink_logit) {
  return torch::sigmoid(lse - sink_logit.to(lse.scalar_type()).view({1, -1, 1}));  // [B, H, T]
}

struct FusedFamilyAttention : torch::autograd::Function<FusedFamilyAttention> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor q, torch::Tensor k,
                               torch::Tensor v, torch::Tensor tau, torch::Tensor distance_bias,
                               torch::Tensor alibi_slopes, torch::Tensor log_forget_cumsum,
                               torch::Tensor sink_logit, bool elastic, bool tau_over_len,
                               bool renormalize, int64_t gemm) {
    tau = present(tau), distance_bias = present(distance_bias),
    alibi_slopes = present(alibi_slopes), sink_logit = present(sink_logit);
    q = q.contiguous(), k = k.contiguous(), v = v.contiguous();
    // Queries at positions first .. T - 1 (kernels/cpu/family_kernel.h).
    const int64_t B = q.size(0), H = q.size(1), Tq = q.size(2), T_len = k.size(2);
    const int64_t first = T_len - Tq;
    const auto dtype = q.scalar_type();
    auto bias = bias_table(alibi_slopes, distance_bias, H, T_len, dtype, q.device());
    log_forget_cumsum = present(log_forget_cumsum);
    auto forget = log_forget_cumsum.defined()
                      ? log_forget_cumsum.detach().to(dtype).contiguous()
                      : torch::Tensor();
    auto thresh =
        elastic ? threshold_table(tau, tau_over_len, B, H, Tq, dtype, q.device(), first)
                : torch::Tensor();
    auto out = torch::empty_like(q);
    auto lse = torch::empty({B, H, Tq}, q.options());
    auto rowsum = torch::empty({B, H, Tq}, q.options());
    AT_DISPATCH_FLOATING_TYPES(dtype, "fused_family_forward", [&] {
      family_forward<scalar_t>(problem<scalar_t>(q, k, v, bias, forget, thresh, elastic,
                                                 renormalize, static_cast<TileGemm>(gemm)),
                               out.data_ptr<scalar_t>(), lse.data_ptr<scalar_t>(),
                               rowsum.data_ptr<scalar_t>());
    });
    if (sink_logit.defined()) out.mul_(sink_share(lse, sink_logit).unsqueeze(-1));
    ctx->save_for_backward({q, k, v, out, lse, rowsum});
    ctx->saved_data["bias"] = bias;
    ctx->saved_data["forget"] = forget;
    ctx->saved_data["thresh"] = thresh;
    ctx->saved_data["tau"] = tau;  // shapes and dtypes of the parameter gradients
    ctx->saved_data["distance_bias"] = distance_bias;
    ctx->saved_data["alibi_slopes"] = alibi_slopes;
    ctx->saved_data["sink_logit"] = sink_logit;
    ctx->saved_data["log_forget_cumsum"] = log_forget_cumsum;  // its gradient's dtype
    ctx->saved_data["elastic"] = elastic;
    ctx->saved_data["tau_over_len"] = tau_over_len;
    ctx->saved_data["renormalize"] = renormalize;
    ctx->saved_data["gemm"] = gemm;
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const auto &q = saved[0], &k = saved[1], &v = saved[2], &out = saved[3], &lse = saved[4],
               &rowsum = saved[5];
    const auto tensor = [&](const char* key) { return ctx->saved_data[key].toTensor(); };
    const auto bias = tensor("bias"), forget = tensor("forget"), thresh = tensor("thresh");
    const auto sink_logit = tensor("sink_logit");
    const bool elastic = ctx->saved_data["elastic"].toBool();
    const bool renormalize = ctx->saved_data["renormalize"].toBool();
    const auto gemm = static_cast<TileGemm>(ctx->saved_data["gemm"].toInt());
    const int64_t B = q.size(0), H = q.size(1), Tq = q.size(2), T_len = k.size(2);

    auto dout = grad_outputs[0].contiguous();
    torch::Tensor dsink;
    if (sink_logit.defined()) {
      const auto g = sink_share(lse, sink_logit);
      dsink = -((1 - g) * (dout * out).sum(-1)).sum(torch::IntArrayRef{0, 2});
      dsink = dsink.to(sink_logit.scalar_type());
      dout = (dout * g.unsqueeze(-1)).contiguous();
    }
    auto dq = torch::zeros_like(q), dk = torch::zeros_like(k), dv = torch::zeros_like(v);
    auto per_row = [&](bool wanted, int64_t rows) {
      return wanted ? torch::zeros({B, H, rows}, q.options()) : torch::Tensor();
    };
    auto dthresh = per_row(elastic, Tq), dbias_bh = per_row(bias.defined(), T_len);
    auto dforget = per_row(forget.defined(), T_len);
    AT_DISPATCH_FLOATING_TYPES(q.scalar_type(), "fused_family_backward", [&] {
      auto data = [](torch::Tensor& t) { return t.defined() ? t.data_ptr<scalar_t>() : nullptr; };
      family_backward<scalar_t>(
          problem<scalar_t>(q, k, v, bias, forget, thresh, elastic, renormalize, gemm),
          out.data_ptr<scalar_t>(), dout.data_ptr<scalar_t>(), lse.data_ptr<scalar_t>(),
          rowsum.data_ptr<scalar_t>(), dq.data_ptr<scalar_t>(), dk.data_ptr<scalar_t>(),
          dv.data_ptr<scalar_t>(), data(dthresh), data(dbias_bh), data(dforget));
    });
    const auto forget_in = tensor("log_forget_cumsum");
    if (dforget.defined()) dforget = dforget.to(forget_in.scalar_type());

    const ParameterGrads pg =
        parameter_grads(dthresh, dbias_bh, tensor("tau"), tensor("distance_bias"),
                        tensor("alibi_slopes"), ctx->saved_data["tau_over_len"].toBool(),
                        T_len - Tq);
    return {dq, dk, dv, pg.tau, pg.distance_bias, pg.alibi_slopes, dforget, dsink,
            {},  {}, {}, {}};
  }
};

// Everything the forward and backward below handle: any B, H, T, D, and queries at the last Tq <= T
// positions (an incremental decoding step); floating dtypes (float32 and float64 natively, 16-bit
// types in float32); ALiBi slopes and a distance bias, alone or together; softmax and
// Elastic-Softmax with tau [H] or [B, Tq, H], over n_i or not, renormalised or not.
std::string unsupported_inputs(const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, const FamilySpec& spec) {
  if (q.dim() != 4 || k.dim() != 4 || !k.sizes().equals(v.sizes()) || q.size(0) != k.size(0) ||
      q.size(1) != k.size(1) || q.size(3) != k.size(3) || q.size(2) > k.size(2))
    return "q [B, H, Tq, D] and k, v [B, H, T, D] with Tq <= T expected (causal self-attention "
           "of the last Tq positions)";
  if (!at::isFloatingType(q.scalar_type()))
    return std::string("floating-point inputs expected, got ") + c10::toString(q.scalar_type());
  if (k.scalar_type() != q.scalar_type() || v.scalar_type() != q.scalar_type())
    return "q, k, v must share one dtype";
  if (!q.device().is_cpu() || !k.device().is_cpu() || !v.device().is_cpu())
    return "CPU tensors expected";
  for (const auto* t : {&spec.alibi_slopes, &spec.distance_bias})
    if (t->defined() && !t->device().is_cpu()) return "CPU tensors expected (position bias)";
  if (spec.normalizer == Normalizer::Elastic && spec.tau.defined() && !spec.tau.device().is_cpu())
    return "CPU tensors expected (tau)";
  for (const auto* t : {&spec.log_forget_cumsum, &spec.sink_logit})
    if (t->defined() && !t->device().is_cpu()) return "CPU tensors expected (forget gate, sink)";
  return unsupported_parameters(spec, q.size(0), q.size(1), q.size(2), k.size(2));
}

torch::Tensor cpu_tiled(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const FamilySpec& spec) {
  return fused_family_attention(q, k, v, spec);
}

// Self-registration (kernels/attention_family.h); ab_kernels_cpu is linked whole.
const bool registered = [] {
  FusedKernel kernel;
  kernel.name = "cpu-tiled";
  kernel.forward = &cpu_tiled;
  kernel.unsupported = &unsupported_inputs;
  kernel.query_offset = true;
  register_fused_kernel("cpu", std::move(kernel));
  return true;
}();

}  // namespace

torch::Tensor fused_family_attention(const torch::Tensor& q, const torch::Tensor& k,
                                     const torch::Tensor& v, const FamilySpec& spec,
                                     TileGemm gemm) {
  const std::string unsupported = unsupported_inputs(q, k, v, spec);
  if (!unsupported.empty()) throw std::runtime_error("fused CPU attention: " + unsupported);
  if (q.scalar_type() != torch::kFloat && q.scalar_type() != torch::kDouble) {
    // Half-precision models run the kernel in float32 (the threshold p + t must not be rounded to
    // 16 bits, docs/paper.md 1.3 (c)); autograd casts the gradients back.
    return fused_family_attention(q.to(torch::kFloat), k.to(torch::kFloat), v.to(torch::kFloat),
                                  spec, gemm)
        .to(q.scalar_type());
  }
  const bool elastic = is_elastic(spec.normalizer);
  return FusedFamilyAttention::apply(
      q, k, v, placeholder(elastic ? spec.tau : torch::Tensor()), placeholder(spec.distance_bias),
      placeholder(spec.alibi_slopes), placeholder(spec.log_forget_cumsum),
      placeholder(spec.sink_logit), elastic, spec.tau_over_len, spec.renormalize,
      static_cast<int64_t>(gemm));
}

}  // namespace attnbench::kernels::cpu
