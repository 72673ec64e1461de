#include "kernels/cuda/family_cuda.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/autograd_args.h"
#include "kernels/cuda/family_device.h"
#include "kernels/family_tables.h"

namespace attnbench::kernels::gpu {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The kernels read rows with 16-byte loads: contiguous, 16-byte aligned (a view at an odd offset
// is copied once).
torch::Tensor aligned(const torch::Tensor& t) {
  const torch::Tensor c = t.contiguous();
  return reinterpret_cast<std::uintptr_t>(c.data_ptr()) % 16 == 0
             ? c
             : c.clone(at::MemoryFormat::Contiguous);
}

// -1 for a dtype the kernels do not take.
int element_of(torch::ScalarType t) {
  switch (t) {
    case torch::kFloat:
      return static_cast<int>(Element::F32);
    case torch::kHalf:
      return static_cast<int>(Element::F16);
    case torch::kBFloat16:
      return static_cast<int>(Element::BF16);
    default:
      return -1;
  }
}

DeviceProblem device_problem(const torch::Tensor& q, const torch::Tensor& k,
                             const torch::Tensor& v, const torch::Tensor& bias,
                             const torch::Tensor& thresh, bool elastic, bool renormalize,
                             bool skip_dead_tiles) {
  DeviceProblem p;
  p.B = q.size(0), p.H = q.size(1), p.T_len = q.size(2), p.D = q.size(3);
  p.element = static_cast<Element>(element_of(q.scalar_type()));
  p.q = q.data_ptr(), p.k = k.data_ptr(), p.v = v.data_ptr();
  p.bias = bias.defined() ? bias.data_ptr<float>() : nullptr;
  p.thresh = elastic ? thresh.data_ptr<float>() : nullptr;
  p.elastic = elastic, p.renormalize = renormalize, p.skip_dead_tiles = skip_dead_tiles;
  return p;
}

void check(const std::string& err) {
  if (!err.empty()) throw std::runtime_error("fused CUDA attention: " + err);
}

float* maybe(const torch::Tensor& t) { return t.defined() ? t.data_ptr<float>() : nullptr; }

struct FamilyCudaAttention : torch::autograd::Function<FamilyCudaAttention> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor q, torch::Tensor k,
                               torch::Tensor v, torch::Tensor tau, torch::Tensor distance_bias,
                               torch::Tensor alibi_slopes, bool elastic, bool tau_over_len,
                               bool renormalize, bool skip_dead_tiles) {
    const c10::cuda::CUDAGuard guard(q.device());
    q = aligned(q), k = aligned(k), v = aligned(v);
    tau = present(tau), distance_bias = present(distance_bias), alibi_slopes = present(alibi_slopes);
    const int64_t B = q.size(0), H = q.size(1), T_len = q.size(2), D = q.size(3);
    const auto f32 = q.options().dtype(torch::kFloat);
    auto bias = bias_table(alibi_slopes, distance_bias, H, T_len, torch::kFloat, q.device());
    auto thresh = elastic ? threshold_table(tau, tau_over_len, B, H, T_len, torch::kFloat,
                                            q.device())
                          : torch::Tensor();
    ForwardResults r;
    auto out = torch::empty_like(q);
    auto lse = torch::empty({B, H, T_len}, f32), rowsum = torch::empty({B, H, T_len}, f32);
    auto kept_v = elastic ? torch::empty({B, H, T_len, D}, f32) : torch::Tensor();
    auto kept_n = elastic ? torch::empty({B, H, T_len}, f32) : torch::Tensor();
    // A 16-bit forward also saves o in fp32, from which the backward reads delta_i = dO_i . o_i
    // (and, renormalising, c_i). Each dS_ij = p_ij (dA_ij - delta_i) of row i carries delta_i's
    // error, so o's rounding to bf16 (2^-9) took dq and dk past 1e-2 relative on about 1 draw in
    // 50 of the GPU test; from the fp32 o they stay below (the emulated roundings of
    // tests/kernels/cuda/family_schedule_test.cpp). In fp32 o is its own copy (out_f32 is null).
    const bool wide_out = q.scalar_type() != torch::kFloat;
    auto out_f32 = wide_out ? torch::empty({B, H, T_len, D}, f32) : torch::Tensor();
    r.out = out.data_ptr(), r.lse = lse.data_ptr<float>(), r.rowsum = rowsum.data_ptr<float>();
    r.kept_v_sum = maybe(kept_v), r.kept_count = maybe(kept_n), r.out_f32 = maybe(out_f32);
    const DeviceProblem p =
        device_problem(q, k, v, bias, thresh, elastic, renormalize, skip_dead_tiles);
    check(family_forward_cuda(p, r, at::cuda::getCurrentCUDAStream()));
    ctx->save_for_backward({q, k, v, out, lse, rowsum, kept_v, kept_n, out_f32});
    ctx->saved_data["bias"] = bias;
    ctx->saved_data["thresh"] = thresh;
    ctx->saved_data["tau"] = tau;  // shapes and dtypes of the parameter gradients
    ctx->saved_data["distance_bias"] = distance_bias;
    ctx->saved_data["alibi_slopes"] = alibi_slopes;
    ctx->saved_data["elastic"] = elastic;
    ctx->saved_data["tau_over_len"] = tau_over_len;
    ctx->saved_data["renormalize"] = renormalize;
    ctx->saved_data["skip_dead_tiles"] = skip_dead_tiles;
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto s = ctx->get_saved_variables();
    const auto &q = s[0], &k = s[1], &v = s[2];
    const c10::cuda::CUDAGuard guard(q.device());
    const auto bias = ctx->saved_data["bias"].toTensor();
    const bool elastic = ctx->saved_data["elastic"].toBool();
    const bool over_len = ctx->saved_data["tau_over_len"].toBool();
    const bool renormalize = ctx->saved_data["renormalize"].toBool();
    const bool skip = ctx->saved_data["skip_dead_tiles"].toBool();
    const int64_t B = q.size(0), H = q.size(1), T_len = q.size(2), D = q.size(3);
    const auto f32 = q.options().dtype(torch::kFloat);
    const auto dout = aligned(grad_outputs[0].to(q.scalar_type()));
    BackwardInputs in;
    in.out = s[3].data_ptr(), in.dout = dout.data_ptr();
    in.lse = s[4].data_ptr<float>(), in.rowsum = s[5].data_ptr<float>();
    in.kept_v_sum = maybe(s[6]), in.kept_count = maybe(s[7]), in.out_f32 = maybe(s[8]);
    auto dq = torch::zeros({B, H, T_len, D}, f32);
    auto dk = torch::empty_like(q), dv = torch::empty_like(q);
    auto dthresh = elastic ? torch::zeros({B, H, T_len}, f32) : torch::Tensor();
    auto dbias = bias.defined() ? torch::zeros({B, H, T_len}, f32) : torch::Tensor();
    auto rows = torch::empty({3, B, H, T_len}, f32);
    const BackwardResults r{dq.data_ptr<float>(), dk.data_ptr(), dv.data_ptr(), maybe(dthresh),
                            maybe(dbias), rows.data_ptr<float>()};
    const DeviceProblem p = device_problem(q, k, v, bias, ctx->saved_data["thresh"].toTensor(),
                                           elastic, renormalize, skip);
    check(family_backward_cuda(p, in, r, at::cuda::getCurrentCUDAStream()));
    const ParameterGrads pg = parameter_grads(
        dthresh, dbias, ctx->saved_data["tau"].toTensor(),
        ctx->saved_data["distance_bias"].toTensor(), ctx->saved_data["alibi_slopes"].toTensor(),
        over_len);
    return {dq.to(q.scalar_type()), dk, dv, pg.tau, pg.distance_bias, pg.alibi_slopes,
            {}, {}, {}, {}};
  }
};

// What the launches need of the device: the shared memory of the larger CTA, forward or backward.
std::string unsupported_device(const torch::Tensor& q) {
  int limit = 0;
  const cudaError_t err = cudaDeviceGetAttribute(
      &limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, q.device().index());
  if (err != cudaSuccess) return std::string("cannot query the device: ") + cudaGetErrorString(err);
  const auto e = static_cast<Element>(element_of(q.scalar_type()));
  const std::size_t need =
      std::max(family_forward_smem(e, q.size(3)), family_backward_smem(e, q.size(3)));
  if (need > static_cast<std::size_t>(limit))
    return "needs " + std::to_string(need) + " bytes of shared memory per block, the device has " +
           std::to_string(limit);
  return "";
}

}  // namespace

std::string family_cuda_unsupported(const torch::Tensor& q, const torch::Tensor& k,
                                    const torch::Tensor& v, const FamilySpec& spec) {
  if (q.dim() != 4 || !q.sizes().equals(k.sizes()) || !q.sizes().equals(v.sizes()))
    return "q, k, v must share one shape [B, H, T, D] (causal self-attention)";
  if (!q.is_cuda() || k.device() != q.device() || v.device() != q.device())
    return "q, k, v on one CUDA device expected";
  if (element_of(q.scalar_type()) < 0)
    return std::string("float32, float16 or bfloat16 inputs expected, got ") +
           c10::toString(q.scalar_type());
  if (k.scalar_type() != q.scalar_type() || v.scalar_type() != q.scalar_type())
    return "q, k, v must share one dtype";
  if (q.size(3) != 64 && q.size(3) != 128)
    return "head dimension 64 or 128 expected, got " + std::to_string(q.size(3));
  if (q.size(0) * q.size(1) > INT32_MAX) return "B * H must fit in a grid dimension";
  for (const auto* t : {&spec.alibi_slopes, &spec.distance_bias, &spec.tau})
    if (t->defined() && t->device() != q.device()) return "parameters on q's device expected";
  std::string s = unsupported_parameters(spec, q.size(0), q.size(1), q.size(2), q.size(2));
  if (s.empty()) s = cuda_missing_feature(spec);
  return s.empty() ? unsupported_device(q) : s;
}

torch::Tensor family_cuda_attention(const torch::Tensor& q, const torch::Tensor& k,
                                    const torch::Tensor& v, const FamilySpec& spec,
                                    bool skip_dead_tiles) {
  const std::string unsupported = family_cuda_unsupported(q, k, v, spec);
  if (!unsupported.empty()) throw std::runtime_error("fused CUDA attention: " + unsupported);
  const bool elastic = spec.normalizer == Normalizer::Elastic;
  return FamilyCudaAttention::apply(q, k, v, placeholder(elastic ? spec.tau : torch::Tensor()),
                                    placeholder(spec.distance_bias),
                                    placeholder(spec.alibi_slopes), elastic,
                                    spec.tau_over_len, spec.renormalize, skip_dead_tiles);
}

}  // namespace attnbench::kernels::gpu
