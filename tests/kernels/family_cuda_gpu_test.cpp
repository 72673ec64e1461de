// The fused CUDA kernels of the attention family (kernels/cuda/family_*.cu; docs/kernels.md, "CUDA
// kernels") against the eager reference in float64 on the GPU (gpu tag): every combination of
// position part (none, ALiBi, distance bias, both), normaliser (softmax, Elastic with each tau
// form), renormalisation, dtype (float32 < 1e-4 relative error, bfloat16 and float16 < 1e-2), head
// dimension (64, 128) and T (one tile, partial tiles, several), output and every gradient; fresh
// random inputs each run, the caching allocator's free memory poisoned with NaN before each kernel
// call. Also: skipping dead tiles changes no bit (the bias gradient: up to its atomic sums'
// rounding); T = 16384; the registered kernel's Elastic route is opt-in until these pass. An
// executable of its own that exits 77 (Skipped) without a CUDA device or in the CPU-only build,
// where the kernels do not exist.
#define CATCH_CONFIG_RUNNER
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
#if defined(ATTNBENCH_CUDA)
#include "kernels/cuda/family_cuda.h"
#endif

// After every torch header (docs/toolchain.md, "Catch2 and glog's CHECK").
#include <catch2/catch.hpp>

#if defined(ATTNBENCH_CUDA)
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
};

Draw draw(const Combo& c, int64_t B, int64_t H, int64_t T, int64_t D, torch::ScalarType dtype) {
  auto o = torch::TensorOptions().dtype(torch::kFloat64).device(kCuda);
  auto rounded = [&](const torch::Tensor& t) { return t.to(dtype).to(torch::kFloat64); };
  Draw d;
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

// Whether this draw is too close to the ReLU kink, or (renormalising) has a row sum too small
// against its terms, for two correct implementations to agree within `tol` (as the CPU kernel's
// test screens, tests/kernels/fused_attention_test.cpp): the kernel forms p + t in fp32.
bool ill_conditioned(const Draw& d, double tol) {
  if (d.spec.normalizer != Normalizer::Elastic) return false;
  torch::NoGradGuard no_grad;
  FamilySpec soft;
  soft.alibi_slopes = d.alibi_slopes, soft.distance_bias = d.distance_bias;
  torch::Tensor probs;
  attnbench::variants::eager_family_attention(d.q, d.k, d.v, soft, &probs);
  const int64_t T = d.q.size(2);
  auto t = attnbench::variants::elastic_offsets(d.tau, d.spec.tau_over_len, T, torch::kFloat64);
  auto causal = torch::ones({T, T}, probs.options().dtype(torch::kBool)).tril().expand_as(probs);
  auto x = probs + t;
  const double eps = std::numeric_limits<float>::epsilon();
  if ((x.abs() <= 256 * eps * t.abs()).logical_and(causal).any().item<bool>()) return true;
  if (!d.spec.renormalize) return false;
  auto r = x.clamp_min(0).masked_fill(causal.logical_not(), 0).sum(-1);
  auto mass = (x.gt(0).logical_and(causal).to(torch::kFloat64) * t.abs()).sum(-1);
  return (mass * eps).gt(r * (tol / 10)).logical_and(r.gt(0)).any().item<bool>();
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

// max |got - want| / max(max |want|, floor) over the tensor.
double relative(const torch::Tensor& got, const torch::Tensor& want, double floor = 1e-8) {
  return (got - want).abs().max().item<double>() / std::max(want.abs().max().item<double>(), floor);
}

// At T = 1 every query sees one key, whose weight does not depend on the score (softmax: 1;
// renormalised Elastic: 1): dq, dk, the distance bias's gradient (and, renormalised, dtau) are 0. A FlashAttention-style
// backward still returns the rounding of dS = P (dP - delta), delta = rowsum(dO o O), which no
// relative error against 0 can judge: those gradients are held to the size of the terms that
// cancel, |dP| = |dO . v| (times |k| / sqrt(D) for dq, |q| / sqrt(D) for dk).
double cancelled_scale(const Draw& d, size_t i) {
  const double dp = (d.dout * d.v).sum(-1).abs().max().item<double>();
  const double root_d = std::sqrt(static_cast<double>(d.q.size(3)));
  if (names[i] == std::string("dq")) return dp * d.k.abs().max().item<double>() / root_d;
  if (names[i] == std::string("dk")) return dp * d.q.abs().max().item<double>() / root_d;
  return dp;
}

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
  // The rows' sign flips of bf16 rounding aside, the dS of a 16-bit backward is rounded to 16 bits
  // before its products, as FlashAttention's: 1e-2 covers it.
  const auto want = run(d, torch::kFloat64, eager), got = run(d, dtype, ours(true));
  CATCH_REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    CATCH_CAPTURE(c.label(), c10::toString(dtype), D, T, names[i]);
    CATCH_REQUIRE(got[i].defined());
    CATCH_CHECK(!torch::isnan(got[i]).any().item<bool>());
    // 0 up to the float64 reference's own rounding: a degenerate gradient of T = 1.
    const double scale = cancelled_scale(d, i);
    const bool zero = T == 1 && want[i].abs().max().item<double>() <= 1e-12 * scale;
    CATCH_CHECK(relative(got[i], want[i], zero ? scale : 1e-8) < tol);
  }
}

}  // namespace

CATCH_TEST_CASE("the CUDA kernels equal eager for every combination, dtype, D and T", "[gpu]") {
  for (const auto& c : all_combos())
    for (const auto dtype : {torch::kFloat, torch::kBFloat16, torch::kHalf})
      for (const int64_t D : {64, 128})
        for (const int64_t T : {1, 100, 257}) compare(c, dtype, D, T);
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

int main(int argc, char** argv) {
  if (!torch::cuda::is_available()) {
    std::puts("skipped: no CUDA device");
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
#else
int main() {
  std::puts("skipped: the fused CUDA kernels exist only in the CUDA build (scripts/build-cuda)");
  return 77;
}
#endif
