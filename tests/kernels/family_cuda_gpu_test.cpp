// The fused CUDA kernels of the attention family (kernels/cuda/family_*.cu; docs/kernels.md, "CUDA
// kernels") against the eager reference in float64 on the GPU (gpu tag): every combination of
// position part (none, ALiBi, distance bias, both), normaliser (softmax, Elastic with each tau
// form), renormalisation, dtype (float32 < 1e-4 relative error, bfloat16 and float16 < 1e-2), head
// dimension (64, 128) and T (one tile, partial tiles, several), output and every gradient; seeded
// random inputs (tests/test_seeds.h: fixed in CI, fresh in a soak), the caching allocator's free memory poisoned with NaN before each kernel
// call. Also: skipping dead tiles changes no bit (the bias gradient: up to its atomic sums'
// rounding); what the forward saves for the backward and the backward's per-row dl/dt, against
// float64; T = 16384; the registered kernel's Elastic route is opt-in until these pass. Built in
// the CUDA build only, where the kernels exist (tests/CMakeLists.txt, attnbench_gpu_test).
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <functional>
#include <string>
#include <vector>

#include "kernels/attention_family.h"
#include "variants/eager.h"
#include "variants/elastic.h"
#include "variants/family.h"
#include "tests/test_seeds.h"
#include <ATen/cuda/CUDAContext.h>

#include "kernels/cuda/family_cuda.h"
#include "kernels/cuda/family_device.h"
#include "kernels/family_tables.h"

// After every torch header (docs/toolchain.md, "Catch2 and glog's CHECK").
#include <catch2/catch.hpp>

namespace {

using attnbench::kernels::FamilySpec;
using attnbench::kernels::Normalizer;
namespace gpu = attnbench::kernels::gpu;

const torch::Device kCuda(torch::kCUDA);

struct Combo {
  std::string position;  // none | alibi | distance_bias | alibi+distance_bias
  std::string form;      // softmax | per_head_over_len | per_head_const | per_token_inv_len |
                         // per_token_none
  bool renormalize = false;
  std::string label() const {
    return position + "/" + form + (renormalize ? "/renormalized" : "");
  }
};

std::vector<Combo> all_combos() {
  std::vector<Combo> out;
  for (const std::string pos : {"none", "alibi", "distance_bias", "alibi+distance_bias"})
    for (const std::string form :
         {"softmax", "per_head_over_len", "per_head_const", "per_token_inv_len", "per_token_none"})
      for (bool renorm : {false, true}) out.push_back({pos, form, renorm});
  return out;
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// The inputs of one run in float64 (the reference's precision); the kernel gets them rounded to
// its dtype, and the reference is computed from those rounded values.
struct Draw {
  torch::Tensor q, k, v, dout, tau, distance_bias, alibi_slopes;
  FamilySpec spec;  // normaliser and flags; parameters filled per side
  uint64_t seed = 0;
};

Draw draw(const Combo& c, int64_t B, int64_t H, int64_t T, int64_t D, torch::ScalarType dtype) {
  static attnbench::testing::Seeds seeds("family_cuda");
  const uint64_t seed = seeds.next();
  torch::manual_seed(seed);  // the CPU's and every CUDA device's generator
  auto o = torch::TensorOptions().dtype(torch::kFloat64).device(kCuda);
  auto rounded = [&](const torch::Tensor& t) { return t.to(dtype).to(torch::kFloat64); };
  Draw d;
  d.seed = seed;
  d.q = rounded(torch::randn({B, H, T, D}, o) * 1.5), d.k = rounded(torch::randn({B, H, T, D}, o));
  d.v = rounded(torch::randn({B, H, T, D}, o)), d.dout = rounded(torch::randn({B, H, T, D}, o));
  if (has(c.position, "alibi")) d.alibi_slopes = torch::rand({H}, o) * 0.3;
  if (has(c.position, "distance_bias"))
    d.distance_bias = (torch::randn({H, 1 + T / 2 + T % 7}, o) * 0.5).to(torch::kFloat32)
                          .to(torch::kFloat64);  // the variants keep it in float32
  if (c.form != "softmax") {
    d.spec.normalizer = Normalizer::Elastic;
    d.spec.renormalize = c.renormalize;
    d.spec.tau_over_len = c.form == "per_head_over_len" || c.form == "per_token_inv_len";
    auto shape = has(c.form, "per_token") ? std::vector<int64_t>{B, T, H} : std::vector<int64_t>{H};
    d.tau = (d.spec.tau_over_len ? torch::rand(shape, o) * 1.8 - 1.5
                                 : torch::rand(shape, o) * 0.3 - 0.2)
                .to(torch::kFloat32)
                .to(torch::kFloat64);
  }
  return d;
}

// How well-conditioned the draw's Elastic weights are, as the CPU kernel's test measures it
// (tests/kernels/fused_attention_test.cpp); the kernel forms p + t in fp32, so eps is float32's:
//  - near_kink: some causal p_ij + t_i within 256 eps |t_i| of the ReLU kink, where two correct
//    implementations may put it on different sides;
//  - kappa (renormalising): max_i sum_j M_ij |t_i| / r_i, the amplification of the rounding of
//    each a_ij = p_ij + t_i by the 1 / r_i of the normalised weights and their gradients.
struct Conditioning {
  bool near_kink = false;
  double kappa = 0;
};
constexpr double kFloatEps = std::numeric_limits<float>::epsilon();

Conditioning conditioning(const Draw& d) {
  Conditioning c;
  if (d.spec.normalizer != Normalizer::Elastic) return c;
  torch::NoGradGuard no_grad;
  FamilySpec soft;
  soft.alibi_slopes = d.alibi_slopes, soft.distance_bias = d.distance_bias;
  torch::Tensor probs;
  attnbench::variants::eager_family_attention(d.q, d.k, d.v, soft, &probs);
  const int64_t T = d.q.size(2);
  auto t = attnbench::variants::elastic_offsets(d.tau, d.spec.tau_over_len, T, torch::kFloat64);
  auto causal = torch::ones({T, T}, probs.options().dtype(torch::kBool)).tril().expand_as(probs);
  auto x = probs + t;
  c.near_kink =
      (x.abs() <= 256 * kFloatEps * t.abs()).logical_and(causal).any().item<bool>();
  if (!d.spec.renormalize) return c;
  auto r = x.clamp_min(0).masked_fill(causal.logical_not(), 0).sum(-1);
  auto mass = (x.gt(0).logical_and(causal).to(torch::kFloat64) * t.abs()).sum(-1);
  c.kappa = (mass / r).masked_fill(r.le(0), 0).max().item<double>();
  return c;
}

// Draws too ill-conditioned for two correct implementations to agree within `tol` are replaced.
bool ill_conditioned(const Draw& d, double tol) {
  const Conditioning c = conditioning(d);
  return c.near_kink || kFloatEps * c.kappa > tol / 10;
}

// A renormalised row's results err by some eps kappa in any fp32 implementation, so the bound grows
// with kappa, as in the CPU kernel's test (tests/kernels/fused_attention_test.cpp: 32, measured up
// to 31 there). The CUDA kernel's fp32 scores are 3xTF32 products, a few times the error of an
// fp32 GEMM: measured up to 42 eps kappa on the H100 (an fp32 per-token dtau at T = 257).
double conditioned_bound(const Draw& d, double tol) {
  return std::max(tol, 64 * kFloatEps * conditioning(d).kappa);
}

// Output and gradients (q, k, v, tau, distance bias) of `attention` on the draw's inputs in
// `dtype` (the reference: float64), as float64 on the GPU.
using Attention = std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&,
                                              const torch::Tensor&, const FamilySpec&)>;
std::vector<torch::Tensor> run(const Draw& d, torch::ScalarType dtype, const Attention& attention) {
  auto leaf = [](const torch::Tensor& t, torch::ScalarType type) {
    return t.defined() ? t.to(type).detach().requires_grad_(true) : t;
  };
  auto q = leaf(d.q, dtype), k = leaf(d.k, dtype), v = leaf(d.v, dtype);
  FamilySpec spec = d.spec;
  const auto param_type = dtype == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32;
  spec.tau = leaf(d.tau, param_type), spec.distance_bias = leaf(d.distance_bias, param_type);
  spec.alibi_slopes = d.alibi_slopes;
  auto out = attention(q, k, v, spec);
  (out.to(torch::kFloat64) * d.dout).sum().backward();
  std::vector<torch::Tensor> r = {out.detach(), q.grad(), k.grad(), v.grad()};
  if (spec.tau.defined()) r.push_back(spec.tau.grad());
  if (spec.distance_bias.defined()) r.push_back(spec.distance_bias.grad());
  for (auto& t : r)
    if (t.defined()) t = t.to(torch::kFloat64);
  return r;
}

// Fills the caching allocator's free blocks with NaN, so that a result the kernel fails to write
// shows up as NaN instead of a stale correct value.
void poison() {
  torch::full({64 << 20}, std::numeric_limits<float>::quiet_NaN(),
              torch::TensorOptions().device(kCuda));
}

Attention ours(bool skip_dead_tiles) {
  return [skip_dead_tiles](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                           const FamilySpec& s) {
    poison();
    return gpu::family_cuda_attention(q, k, v, s, skip_dead_tiles);
  };
}

torch::Tensor eager(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                    const FamilySpec& s) {
  return attnbench::variants::eager_family_attention(q, k, v, s);
}

const char* names[] = {"output", "dq", "dk", "dv", "dtau", "ddistance_bias"};

// The names of run()'s results for this draw: dtau and ddistance_bias only where it has them.
std::vector<std::string> result_names(const Draw& d) {
  std::vector<std::string> r(names, names + 4);
  if (d.tau.defined()) r.push_back("dtau");
  if (d.distance_bias.defined()) r.push_back("ddistance_bias");
  return r;
}

// max |got - want| / max(max |want|, floor) over the tensor.
double relative(const torch::Tensor& got, const torch::Tensor& want, double floor = 1e-8) {
  return (got - want).abs().max().item<double>() / std::max(want.abs().max().item<double>(), floor);
}

// At T = 1 every query sees one key, whose weight does not depend on the score (softmax: 1;
// renormalised Elastic: 1): dq, dk, the distance bias's gradient (and, renormalised, dtau) are 0. A FlashAttention-style
// backward still returns the rounding of dS = P (dP - delta), delta = rowsum(dO o O), which no
// relative error against 0 can judge: those gradients are held to the size of the terms that
// cancel, |dP| = |dO . v| (times |k| / sqrt(D) for dq, |q| / sqrt(D) for dk).
double cancelled_scale(const Draw& d, const std::string& name) {
  const double dp = (d.dout * d.v).sum(-1).abs().max().item<double>();
  const double root_d = std::sqrt(static_cast<double>(d.q.size(3)));
  if (name == "dq") return dp * d.k.abs().max().item<double>() / root_d;
  if (name == "dk") return dp * d.q.abs().max().item<double>() / root_d;
  return dp;
}

double per_row_tau_scale(const Draw& d);

void compare(const Combo& c, torch::ScalarType dtype, int64_t D, int64_t T) {
  const double tol = dtype == torch::kFloat ? 1e-4 : 1e-2;
  const int64_t B = 2, H = 2;
  Draw d;
  for (int attempt = 0;; ++attempt) {
    d = draw(c, B, H, T, D, dtype);
    if (!ill_conditioned(d, tol)) break;
    if (attempt == 50) {  // reported, and the other combinations still run
      CATCH_FAIL_CHECK("no well-conditioned draw in 50 for " << c.label() << ", "
                       << c10::toString(dtype) << ", D " << D << ", T " << T);
      return;
    }
  }
  // A 16-bit kernel rounds the weights and dS before their products, as FlashAttention's, and
  // reads delta_i from an fp32 o: 1e-2 covers that (bfloat16, emulated on the CPU: 8.4e-3 at worst
  // over 200 draws of this shape; tests/kernels/cuda/family_schedule_test.cpp).
  const double bound = conditioned_bound(d, tol);
  const auto want = run(d, torch::kFloat64, eager), got = run(d, dtype, ours(true));
  const auto name = result_names(d);
  CATCH_REQUIRE(got.size() == want.size());
  CATCH_REQUIRE(want.size() == name.size());
  for (size_t i = 0; i < want.size(); ++i) {
    CATCH_CAPTURE(c.label(), c10::toString(dtype), D, T, name[i]);
    CATCH_INFO(attnbench::testing::describe(d.seed));
    CATCH_REQUIRE(got[i].defined());
    CATCH_CHECK(!torch::isnan(got[i]).any().item<bool>());
    // 0 up to the float64 reference's own rounding: a degenerate gradient of T = 1.
    const double scale = cancelled_scale(d, name[i]);
    const bool zero = T == 1 && want[i].abs().max().item<double>() <= 1e-12 * scale;
    double floor = zero ? scale : 1e-8;
    // A per-head tau's gradient is a sum of one term per row, as in the CPU kernel's test
    // (tests/kernels/fused_attention_test.cpp): judged against its terms' magnitudes, not the
    // possibly cancelling sum. Each row's term is held to `tol` on its own in the rows test below.
    if (name[i] == "dtau" && d.tau.dim() == 1)
      floor = std::max(floor, per_row_tau_scale(d));
    CATCH_CHECK(relative(got[i], want[i], floor) < bound);
  }
}

}  // namespace

CATCH_TEST_CASE("the CUDA kernels equal eager for every combination, dtype, D and T", "[gpu]") {
  for (const auto& c : all_combos())
    for (const auto dtype : {torch::kFloat, torch::kBFloat16, torch::kHalf})
      for (const int64_t D : {64, 128})
        for (const int64_t T : {1, 100, 257}) compare(c, dtype, D, T);
}

namespace {

// What the forward saves for the backward (lse, rowsum r, kept count n, kept-value sum N, o) and
// the backward's dl/dt_i, through the raw device API, against float64 computed from the same
// rounded inputs: a gradient that misses its tolerance is traced to the quantity that carries the
// error. dt_i = u_i (dO_i . N_i - c_i n_i), c_i = dO_i . o_i (family_math.cuh) is checked twice:
// against the exact reference, and against the formula evaluated in float64 on the kernel's own
// saved values (which isolates the per-row arithmetic from the rounding of what it reads).
struct SavedRows {
  torch::Tensor lse, rowsum, kept_count, kept_v_sum, out, dt;
};

// dl/dt_i = u_i (dO_i . N_i - c_i n_i), c_i = dO_i . o_i when renormalising (family_math.cuh).
torch::Tensor row_dt(const torch::Tensor& dout, const SavedRows& r, const torch::Tensor& u,
                     bool renormalize) {
  const auto c = renormalize ? (dout * r.out).sum(-1) : torch::zeros_like(u);
  return u * ((dout * r.kept_v_sum).sum(-1) - c * r.kept_count);
}

SavedRows kernel_rows(const Draw& d, torch::ScalarType dtype) {
  const int64_t B = d.q.size(0), H = d.q.size(1), T = d.q.size(2), D = d.q.size(3);
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat).device(kCuda);
  const auto q = d.q.to(dtype).contiguous(), k = d.k.to(dtype).contiguous();
  const auto v = d.v.to(dtype).contiguous(), dout = d.dout.to(dtype).contiguous();
  const auto bias = attnbench::kernels::bias_table(d.alibi_slopes, d.distance_bias, H, T,
                                                   torch::kFloat, kCuda);
  const auto thresh = attnbench::kernels::threshold_table(d.tau, d.spec.tau_over_len, B, H, T,
                                                          torch::kFloat, kCuda);
  gpu::DeviceProblem p;
  p.B = B, p.H = H, p.T_len = T, p.D = D;
  p.element = dtype == torch::kFloat ? gpu::Element::F32
              : dtype == torch::kHalf ? gpu::Element::F16 : gpu::Element::BF16;
  p.q = q.data_ptr(), p.k = k.data_ptr(), p.v = v.data_ptr();
  p.bias = bias.defined() ? bias.data_ptr<float>() : nullptr;
  p.thresh = thresh.data_ptr<float>();
  p.elastic = true, p.renormalize = d.spec.renormalize;
  SavedRows s;
  s.out = torch::empty_like(q);
  s.lse = torch::empty({B, H, T}, f32), s.rowsum = torch::empty({B, H, T}, f32);
  s.kept_count = torch::empty({B, H, T}, f32), s.kept_v_sum = torch::empty({B, H, T, D}, f32);
  auto out_f32 = dtype != torch::kFloat ? torch::empty({B, H, T, D}, f32) : torch::Tensor();
  gpu::ForwardResults r;
  r.out = s.out.data_ptr(), r.lse = s.lse.data_ptr<float>(), r.rowsum = s.rowsum.data_ptr<float>();
  r.kept_v_sum = s.kept_v_sum.data_ptr<float>(), r.kept_count = s.kept_count.data_ptr<float>();
  r.out_f32 = out_f32.defined() ? out_f32.data_ptr<float>() : nullptr;
  const auto stream = at::cuda::getCurrentCUDAStream();
  CATCH_REQUIRE(gpu::family_forward_cuda(p, r, stream) == "");
  gpu::BackwardInputs in;
  in.out = s.out.data_ptr(), in.dout = dout.data_ptr(), in.lse = r.lse, in.rowsum = r.rowsum;
  in.kept_v_sum = r.kept_v_sum, in.kept_count = r.kept_count, in.out_f32 = r.out_f32;
  auto dq = torch::zeros({B, H, T, D}, f32), dk = torch::empty_like(q), dv = torch::empty_like(q);
  s.dt = torch::zeros({B, H, T}, f32);
  auto dbias = torch::zeros({B, H, T}, f32), rows = torch::empty({3, B, H, T}, f32);
  const gpu::BackwardResults br{dq.data_ptr<float>(), dk.data_ptr(), dv.data_ptr(),
                                s.dt.data_ptr<float>(), bias.defined() ? dbias.data_ptr<float>()
                                                                       : nullptr,
                                rows.data_ptr<float>()};
  CATCH_REQUIRE(gpu::family_backward_cuda(p, in, br, stream) == "");
  if (out_f32.defined()) s.out = out_f32;  // what the backward reads for delta_i and c_i
  for (auto* t : {&s.lse, &s.rowsum, &s.kept_count, &s.kept_v_sum, &s.out, &s.dt})
    *t = t->to(torch::kFloat64);
  return s;
}

SavedRows reference_rows(const Draw& d) {
  const int64_t B = d.q.size(0), H = d.q.size(1), T = d.q.size(2), D = d.q.size(3);
  const auto f64 = d.q.options();
  auto s = torch::matmul(d.q, d.k.transpose(-1, -2)) / std::sqrt(static_cast<double>(D));
  const auto i = torch::arange(T, f64.dtype(torch::kLong)).view({T, 1});
  const auto j = torch::arange(T, f64.dtype(torch::kLong)).view({1, T});
  const auto causal = (j <= i);
  const auto bias = attnbench::kernels::bias_table(d.alibi_slopes, d.distance_bias, H, T,
                                                   torch::kFloat64, kCuda);
  if (bias.defined()) s = s + bias.index({torch::indexing::Slice(), (i - j).clamp_min(0)});
  s = s.masked_fill(causal.logical_not(), -std::numeric_limits<double>::infinity());
  const auto t = attnbench::kernels::threshold_table(d.tau, d.spec.tau_over_len, B, H, T,
                                                     torch::kFloat64, kCuda).unsqueeze(-1);
  SavedRows r;
  r.lse = torch::logsumexp(s, -1);
  const auto x = torch::exp(s - r.lse.unsqueeze(-1)) + t;
  const auto kept = x.gt(0).logical_and(causal).to(torch::kFloat64);
  const auto a = x.clamp_min(0) * kept;
  r.rowsum = a.sum(-1), r.kept_count = kept.sum(-1), r.kept_v_sum = torch::matmul(kept, d.v);
  const auto u = d.spec.renormalize
                     ? torch::where(r.rowsum.gt(0), 1 / r.rowsum, torch::zeros_like(r.rowsum))
                     : torch::ones_like(r.rowsum);
  r.out = torch::matmul(a, d.v) * u.unsqueeze(-1);
  r.dt = row_dt(d.dout, r, u, d.spec.renormalize);
  return r;
}

// max_h sum_{b,i} |dl/dt_i dt_i/dtau_h|: the magnitudes a per-head tau's gradient sums.
double per_row_tau_scale(const Draw& d) {
  auto dt = reference_rows(d).dt.abs();
  const int64_t T = dt.size(2);
  if (d.spec.tau_over_len)
    dt = dt / attnbench::kernels::visible_keys(T, dt.options()).view({1, 1, T});
  return dt.sum(torch::IntArrayRef{0, 2}).max().item<double>();
}

}  // namespace

CATCH_TEST_CASE("the forward's saved rows and the backward's dt equal float64's", "[gpu][rows]") {
  for (const std::string form : {"per_head_const", "per_token_none", "per_head_over_len"})
    for (const auto dtype : {torch::kFloat, torch::kBFloat16, torch::kHalf})
      for (const int64_t T : {100, 257}) {
        const Combo c{"distance_bias", form, true};
        const double tol = dtype == torch::kFloat ? 1e-4 : 1e-2;
        Draw d;
        do d = draw(c, 2, 2, T, 64, dtype); while (ill_conditioned(d, tol));
        const SavedRows got = kernel_rows(d, dtype), want = reference_rows(d);
        const auto u = torch::where(got.rowsum.gt(0), 1 / got.rowsum, torch::zeros_like(got.rowsum));
        const auto dt_from_saved = row_dt(d.dout, got, u, true);
        CATCH_CAPTURE(form, c10::toString(dtype), T);
        CATCH_INFO(attnbench::testing::describe(d.seed));
        // The worst row of dt, with what it is made of, for the log.
        const auto err = (got.dt - want.dt).abs();
        const int64_t at = err.argmax().item<int64_t>();
        auto pick = [&](const torch::Tensor& x) { return x.reshape(-1)[at].item<double>(); };
        std::printf("%s %s T=%lld: dt rel %.3g (row %lld: r %.6g/%.6g n %.0f/%.0f dt %.6g want %.6g "
                    "from-saved %.6g) lse %.3g rowsum %.3g N %.3g out %.3g\n",
                    form.c_str(), c10::toString(dtype), static_cast<long long>(T),
                    relative(got.dt, want.dt), static_cast<long long>(at), pick(got.rowsum),
                    pick(want.rowsum), pick(got.kept_count), pick(want.kept_count), pick(got.dt),
                    pick(want.dt), pick(dt_from_saved), (got.lse - want.lse).abs().max().item<double>(),
                    relative(got.rowsum, want.rowsum), relative(got.kept_v_sum, want.kept_v_sum),
                    relative(got.out, want.out));
        CATCH_CHECK(torch::equal(got.kept_count, want.kept_count));
        // r_i sums the weights rounded to the input dtype, as A V uses them (family_forward.cu).
        CATCH_CHECK(relative(got.rowsum, want.rowsum) < (dtype == torch::kFloat ? 1e-5 : 4e-3));
        CATCH_CHECK(relative(got.dt, want.dt) <
                    conditioned_bound(d, tol));
        CATCH_CHECK(relative(got.kept_v_sum, want.kept_v_sum) < 1e-5);
        CATCH_CHECK(relative(got.dt, dt_from_saved) < 1e-5);
      }
}

CATCH_TEST_CASE("skipping dead tiles changes no bit but the bias gradient's atomic sums", "[gpu]") {
  for (const auto dtype : {torch::kFloat, torch::kBFloat16}) {
    const Combo c{"distance_bias", "per_head_over_len", false};
    const Draw d = draw(c, 1, 4, 1024, 64, dtype);
    const auto skip = run(d, dtype, ours(true)), all = run(d, dtype, ours(false));
    for (size_t i = 0; i < skip.size(); ++i) {
      CATCH_CAPTURE(names[i], c10::toString(dtype));
      // The distance bias's gradient is summed by fp32 atomic adds (family_backward.cu: shared
      // memory per tile, then global), whose order the scheduler picks: equal up to the rounding
      // of a reordered fp32 sum, not bit for bit, from one run to the next as between these two.
      if (names[i] == std::string("ddistance_bias"))
        CATCH_CHECK(relative(skip[i], all[i]) < 1e-5);
      else
        CATCH_CHECK(torch::equal(skip[i], all[i]));
    }
  }
}

CATCH_TEST_CASE("T = 16384 in bfloat16, D = 64, equals eager", "[gpu]") {
  const Combo c{"distance_bias", "per_head_over_len", false};
  const Draw d = draw(c, 1, 1, 16384, 64, torch::kBFloat16);
  const auto want = run(d, torch::kFloat64, eager), got = run(d, torch::kBFloat16, ours(true));
  for (size_t i = 0; i < want.size(); ++i) {
    CATCH_CAPTURE(names[i]);
    CATCH_CHECK(relative(got[i], want[i]) < 1e-2);
  }
}

// scripts/gpu-check runs this one alone under compute-sanitizer memcheck and racecheck: every
// feature at once (both biases, per-token tau, renormalisation), partial tiles, bf16 and fp32.
CATCH_TEST_CASE("one small forward and backward per dtype", "[gpu][sanitizer]") {
  const Combo c{"alibi+distance_bias", "per_token_inv_len", true};
  for (const auto dtype : {torch::kBFloat16, torch::kFloat})
    for (const int64_t D : {64, 128}) {
      const auto got = run(draw(c, 1, 2, 200, D, dtype), dtype, ours(true));
      for (size_t i = 0; i < got.size(); ++i) {
        CATCH_CAPTURE(names[i], c10::toString(dtype), D);
        CATCH_CHECK(!torch::isnan(got[i]).any().item<bool>());
      }
    }
}

CATCH_TEST_CASE("the registered CUDA kernel: Elastic is opt-in until validated", "[gpu]") {
  const auto* kernel = attnbench::kernels::find_fused_kernel(torch::kCUDA);
  CATCH_REQUIRE(kernel != nullptr);
  auto q = torch::randn({1, 2, 64, 64}, torch::TensorOptions().device(kCuda));
  FamilySpec elastic;
  elastic.normalizer = Normalizer::Elastic;
  elastic.tau = torch::full({2}, -1.0, q.options());
  CATCH_CHECK(kernel->unsupported(q, q, q, elastic) == "");
  CATCH_CHECK(kernel->unvalidated(q, q, q, elastic) != "");
  CATCH_CHECK(attnbench::variants::choose_fused_kernel("auto", "lazy", q, q, q, elastic, false) ==
              nullptr);
  CATCH_CHECK(attnbench::variants::choose_fused_kernel("fused", "lazy", q, q, q, elastic, false) ==
              kernel);
}
