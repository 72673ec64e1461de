// The fused CPU kernel against the eager reference (variants/eager.h) over the whole family
// (the acceptance bounds of docs/kernels.md, "Correctness"): fp32 relative error < 1e-5 on outputs
// and < 1e-4 on every gradient, fp64 < 1e-10, seeded draws (tests/test_seeds.h), T = 1 and T not a multiple of the tile
// size, all-zero elastic rows.
#include "kernels/cpu/fused_attention.h"

#include <torch/torch.h>

#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/common/registry.h"
#include "kernels/attention_family.h"
#include "kernels/cpu/family_kernel.h"
#include "kernels/torch_compat.h"
#include "tests/test_seeds.h"
#include "variants/eager.h"
#include "variants/elastic.h"
#include "variants/position.h"

// After every torch header (docs/toolchain.md, "Catch2 and glog's CHECK").
#include <catch2/catch.hpp>

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace fused_attention_test {

namespace {

using attnbench::kernels::FamilySpec;
using attnbench::kernels::Normalizer;
using attnbench::kernels::cpu::TileGemm;

// position x normaliser, as a variant would configure them (variants/family.cpp).
struct Combo {
  std::string
      position;  // none | rope | alibi | distance_bias | alibi+distance_bias | rope+distance_bias
  std::string tau_form;  // softmax | per_head_over_len | per_head_const | per_token_inv_len |
                         // per_token_none
  bool renormalize = false;
};

std::vector<Combo> all_combos() {
  const std::vector<std::string> positions = {
      "none", "rope", "alibi", "distance_bias", "alibi+distance_bias", "rope+distance_bias"};
  const std::vector<std::string> forms = {"per_head_over_len", "per_head_const",
                                          "per_token_inv_len", "per_token_none"};
  std::vector<Combo> out;
  for (const auto& pos : positions) {
    out.push_back({pos, "softmax", false});
    for (const auto& f : forms)
      for (bool renorm : {false, true}) out.push_back({pos, f, renorm});
  }
  return out;
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

struct Problem {
  torch::Tensor q, k, v, dout;  // leaves; dout is the upstream gradient
  torch::Tensor tau, distance_bias, alibi_slopes;
  bool rope = false;
  FamilySpec spec() const {
    FamilySpec s;
    s.alibi_slopes = alibi_slopes;
    s.distance_bias = distance_bias;
    return s;
  }
};

// Random inputs in `dtype`; the elastic offsets are drawn so that some weights survive and some
// not.
Problem draw(const Combo& c, int64_t B, int64_t H, int64_t T, int64_t D, torch::ScalarType dtype,
             uint64_t seed, FamilySpec& spec) {
  torch::manual_seed(seed);
  auto o = torch::TensorOptions().dtype(dtype);
  Problem p;
  p.q = torch::randn({B, H, T, D}, o) * 1.5;  // peaked enough for p to exceed 1/n_i often
  p.k = torch::randn({B, H, T, D}, o);
  p.v = torch::randn({B, H, T, D}, o);
  p.dout = torch::randn({B, H, T, D}, o);
  p.rope = has(c.position, "rope");
  if (has(c.position, "alibi"))  // constant float64 slopes, as variants/family.cpp keeps them
    p.alibi_slopes = torch::rand({H}, torch::kFloat64) * 0.3;
  if (has(c.position, "distance_bias")) {
    const int64_t W = 1 + torch::randint(T + 8, {1}).item<int64_t>();  // W < T and W > T both occur
    p.distance_bias = torch::randn({H, W}, o) * 0.5;
  }
  spec = p.spec();
  if (c.tau_form != "softmax") {
    spec.normalizer = Normalizer::Elastic;
    spec.renormalize = c.renormalize;
    const bool per_token = has(c.tau_form, "per_token");
    spec.tau_over_len = c.tau_form == "per_head_over_len" || c.tau_form == "per_token_inv_len";
    auto shape = per_token ? std::vector<int64_t>{B, T, H} : std::vector<int64_t>{H};
    // tau / n_i around the uniform share -1/n_i; a constant offset around -0.1 (both signs occur).
    p.tau =
        spec.tau_over_len ? torch::rand(shape, o) * 1.8 - 1.5 : torch::rand(shape, o) * 0.3 - 0.2;
    spec.tau = p.tau;
  }
  return p;
}

// True when the elastic weights of this draw are ill-conditioned in `dtype`'s precision `eps`, so
// that rounding differences between two correct implementations may exceed `tol`:
//  - some causal p_ij + t_i lies within 32 eps |t_i| of the ReLU kink (the two implementations may
//    put it on different sides; the derivative is undefined there), or
//  - renormalising, a row's sum r_i = sum_j a_ij is small against the rounding of its terms
//    (each a_ij = p_ij + t_i carries an absolute error ~ eps |t_i|, and the gradients scale as
//    1/r_i): eps * sum_j M_ij |t_i| / r_i > tol / 10.
// Such draws are replaced by fresh ones rather than compared (rows whose weights are all exactly 0
// are well-conditioned and are kept).
struct Conditioning {
  bool near_kink = false;  // some p + t within 32 eps |t| of 0
  double kappa = 0;        // renormalising: max_i sum_j M_ij |t_i| / r_i over rows with r_i > 0
};

Conditioning conditioning(const Problem& p, const FamilySpec& spec, double eps) {
  Conditioning c;
  if (spec.normalizer != Normalizer::Elastic) return c;
  torch::NoGradGuard no_grad;
  FamilySpec soft = p.spec();
  torch::Tensor probs;
  auto q = p.rope ? attnbench::variants::apply_rope(p.q, {10000.0}) : p.q;
  auto k = p.rope ? attnbench::variants::apply_rope(p.k, {10000.0}) : p.k;
  attnbench::variants::eager_family_attention(q, k, p.v, soft, &probs);
  const int64_t T = p.q.size(2);
  auto t =
      attnbench::variants::elastic_offsets(spec.tau, spec.tau_over_len, T, probs.scalar_type());
  auto causal = torch::ones({T, T}, torch::kBool).tril().expand_as(probs);
  auto x = probs + t;
  c.near_kink = (x.abs() <= 32 * eps * t.abs()).logical_and(causal).any().item<bool>();
  if (!spec.renormalize) return c;
  auto kept = x.gt(0).logical_and(causal);
  auto r = x.clamp_min(0).masked_fill(causal.logical_not(), 0).sum(-1);
  auto mass = (kept.to(x.scalar_type()) * t.abs()).sum(-1);
  c.kappa = (mass / r).masked_fill(r.le(0), 0).max().item<double>();
  return c;
}

bool ill_conditioned(const Problem& p, const FamilySpec& spec, double eps, double tol) {
  const Conditioning c = conditioning(p, spec, eps);
  return c.near_kink || eps * c.kappa > tol / 10;
}

struct Result {
  std::vector<std::string> names;
  std::vector<torch::Tensor> values;  // output, then gradients
};

using Attention = std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&,
                                              const torch::Tensor&, const FamilySpec&)>;

Result run(const Problem& p, const FamilySpec& spec_in, const Attention& attention) {
  auto leaf = [](const torch::Tensor& t) {
    return t.defined() ? t.detach().clone().requires_grad_(true) : t;
  };
  auto q = leaf(p.q), k = leaf(p.k), v = leaf(p.v);
  FamilySpec spec = spec_in;
  spec.tau = leaf(spec_in.tau);
  spec.distance_bias = leaf(spec_in.distance_bias);
  auto qr = p.rope ? attnbench::variants::apply_rope(q, {10000.0}) : q;
  auto kr = p.rope ? attnbench::variants::apply_rope(k, {10000.0}) : k;
  auto out = attention(qr, kr, v, spec);
  (out * p.dout).sum().backward();
  Result r{{"output", "dq", "dk", "dv"}, {out.detach(), q.grad(), k.grad(), v.grad()}};
  if (spec.tau.defined()) r.names.push_back("dtau"), r.values.push_back(spec.tau.grad());
  if (spec.distance_bias.defined())
    r.names.push_back("ddistance_bias"), r.values.push_back(spec.distance_bias.grad());
  return r;
}

double max_abs(const torch::Tensor& t) { return t.abs().max().item<double>(); }

// max |got - want| / max |want|. `floor` bounds the denominator from below for a gradient that is
// exactly zero in exact arithmetic (at T = 1: dq and dk always, dtau under renormalisation), where
// both implementations return rounding noise; the floor is the scale of the q, k, v gradients.
double relative_error(const torch::Tensor& got, const torch::Tensor& want, double floor = 0) {
  const double err = (got.to(want.scalar_type()) - want).abs().max().item<double>();
  return err / std::max({max_abs(want), floor, 1e-300});
}

double gradient_floor(const Result& want) {
  return std::max({max_abs(want.values[1]), max_abs(want.values[2]), max_abs(want.values[3])});
}

torch::Tensor eager(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                    const FamilySpec& s) {
  return attnbench::variants::eager_family_attention(q, k, v, s);
}

Attention fused(TileGemm g = attnbench::kernels::cpu::default_tile_gemm()) {
  return [g](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
             const FamilySpec& s) {
    return attnbench::kernels::cpu::fused_family_attention(q, k, v, s, g);
  };
}

// max_h sum_{b,i} |term_bih| for a per-head tau: dtau_h is a sum of one term per row, whose
// rounding error is relative to its terms' magnitudes, not to the (possibly cancelling) sum. The
// terms are the gradient of a per-row copy of tau, in float64.
double per_row_tau_scale(const Problem& p, const FamilySpec& spec) {
  auto f64 = [](const torch::Tensor& t) { return t.defined() ? t.detach().to(torch::kDouble) : t; };
  const int64_t B = p.q.size(0), H = p.q.size(1), T = p.q.size(2);
  FamilySpec rows = spec;
  rows.tau = f64(spec.tau).view({1, 1, H}).expand({B, T, H}).clone().requires_grad_(true);
  rows.distance_bias = f64(spec.distance_bias);
  auto q = f64(p.q), k = f64(p.k);
  if (p.rope) q = attnbench::variants::apply_rope(q, {10000.0});
  if (p.rope) k = attnbench::variants::apply_rope(k, {10000.0});
  (attnbench::variants::eager_family_attention(q, k, f64(p.v), rows) * f64(p.dout)).sum().backward();
  return rows.tau.grad().abs().sum(torch::IntArrayRef{0, 1}).max().item<double>();
}

// Compares `kernel` with eager on one draw (its seed is reported on failure; tests/test_seeds.h).
void compare(const Combo& c, int64_t T, torch::ScalarType dtype, const Attention& kernel,
             int64_t B = 2, int64_t H = 3, int64_t D = 16) {
  const bool fp64 = dtype == torch::kDouble;
  const double out_tol = fp64 ? 1e-10 : 1e-5, grad_tol = fp64 ? 1e-10 : 1e-4;
  attnbench::testing::Seeds seeds(c.position + "/" + c.tau_form + "/" +
                                  std::to_string(c.renormalize) + "/" + std::to_string(T) + "/" +
                                  std::string(c10::toString(dtype)));
  FamilySpec spec;
  Problem p;
  uint64_t seed = 0;
  for (int attempt = 0;; ++attempt) {
    seed = seeds.next();
    p = draw(c, B, H, T, D, dtype, seed, spec);
    const double eps =
        fp64 ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
    if (!ill_conditioned(p, spec, eps, grad_tol)) break;
    CATCH_REQUIRE(attempt < 50);  // a draw away from the kink is the common case
  }
  // What is compared here is what the registered kernel declares it serves (dispatch asks it).
  CATCH_CHECK(attnbench::kernels::find_fused_kernel(torch::kCPU)->supports(p.q, p.k, p.v, spec));
  // A renormalised row's output errs by up to a few eps kappa in either implementation (measured
  // up to 1.1e-5 at eps kappa just under the screen above): its bound grows with kappa, as the
  // CUDA schedule test's does (tests/kernels/cuda/family_schedule_test.cpp).
  const double eps =
      fp64 ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
  const double kappa = conditioning(p, spec, eps).kappa;
  const double out_bound = std::max(out_tol, 32 * eps * kappa);
  // The gradients carry the same 1/r_i (dA = (g - c) / r_i): their bound grows alike (measured
  // 1.25e-4 on dtau against 1e-4 once in about 40 runs, renormalised rows just inside the screen).
  const double grad_bound = std::max(grad_tol, 32 * eps * kappa);
  const Result want = run(p, spec, eager), got = run(p, spec, kernel);
  CATCH_REQUIRE(got.names == want.names);
  for (size_t i = 0; i < want.values.size(); ++i) {
    CATCH_INFO("position=" << c.position << " normalizer=" << c.tau_form
                           << " renormalize=" << c.renormalize << " T=" << T << " dtype=" << dtype
                           << " " << attnbench::testing::describe(seed) << " tensor=" << want.names[i]);
    CATCH_REQUIRE(got.values[i].defined());
    CATCH_REQUIRE(got.values[i].sizes() == want.values[i].sizes());
    if (i == 0) {
      CATCH_CHECK(relative_error(got.values[i], want.values[i]) < out_bound);
    } else {
      double floor = gradient_floor(want);
      if (want.names[i] == "dtau" && spec.tau.dim() == 1)  // a sum over rows: measured 1.1e-4 once
        floor = std::max(floor, per_row_tau_scale(p, spec));  // relative to max |dtau| in 3 CI runs
      CATCH_CHECK(relative_error(got.values[i], want.values[i], floor) < grad_bound);
    }
  }
}

}  // namespace

CATCH_TEST_CASE("fused equals eager for every family combination in float32") {
  for (const auto& c : all_combos())
    for (int64_t T : {1, 70, 131}) compare(c, T, torch::kFloat, fused());
}

CATCH_TEST_CASE("fused equals eager for every family combination in float64") {
  for (const auto& c : all_combos())
    for (int64_t T : {1, 70, 131}) compare(c, T, torch::kDouble, fused());
}

CATCH_TEST_CASE("every tile-product implementation equals eager") {
  using attnbench::kernels::cpu::blas_available;
  std::vector<TileGemm> gemms = {TileGemm::Loops, TileGemm::Vectorized};
  if (blas_available()) gemms.push_back(TileGemm::Blas);
  for (TileGemm g : gemms) {
    CATCH_INFO("tile gemm " << attnbench::kernels::cpu::tile_gemm_name(g));
    for (torch::ScalarType dtype : {torch::kFloat, torch::kDouble}) {
      compare({"rope+distance_bias", "per_token_inv_len", true}, 131, dtype, fused(g));
      compare({"alibi", "softmax", false}, 131, dtype, fused(g));
    }
  }
}

CATCH_TEST_CASE("rows whose elastic weights are all zero match eager and output zero") {
  const int64_t B = 2, H = 3, T = 77, D = 16;
  attnbench::testing::Seeds seeds("all-zero rows");
  for (torch::ScalarType dtype : {torch::kFloat, torch::kDouble}) {
    for (bool renorm : {false, true}) {
      for (bool per_token : {false, true}) {
        const uint64_t seed = seeds.next();
        CATCH_INFO("dtype=" << dtype << " renormalize=" << renorm << " per_token=" << per_token
                            << " " << attnbench::testing::describe(seed));
        torch::manual_seed(seed);
        auto o = torch::TensorOptions().dtype(dtype);
        Problem p;
        p.q = torch::randn({B, H, T, D}, o), p.k = torch::randn({B, H, T, D}, o);
        p.v = torch::randn({B, H, T, D}, o), p.dout = torch::randn({B, H, T, D}, o);
        p.distance_bias = torch::randn({H, 20}, o) * 0.5;
        FamilySpec spec = p.spec();
        spec.normalizer = Normalizer::Elastic;
        spec.renormalize = renorm;
        spec.tau_over_len = false;
        // Head 0 (per head) or every odd token (per token) gets t = -2 < -p: all its weights are 0.
        // The others get t > 0 (no weight near the ReLU kink), so normal rows sit next to zero
        // rows.
        if (per_token) {
          p.tau = torch::full({B, T, H}, 1e-3, o);
          p.tau.index_put_({torch::indexing::Slice(), torch::indexing::Slice(1, T, 2)}, -2.0);
        } else {
          p.tau = torch::tensor({-2.0, 1e-3, 0.05}, o);
        }
        spec.tau = p.tau;
        const Result want = run(p, spec, eager), got = run(p, spec, fused());
        auto zero_rows =
            per_token ? got.values[0].index({torch::indexing::Slice(), torch::indexing::Slice(),
                                             torch::indexing::Slice(1, T, 2)})
                      : got.values[0].select(1, 0);
        CATCH_CHECK(zero_rows.abs().max().item<double>() == 0.0);
        const bool fp64 = dtype == torch::kDouble;
        for (size_t i = 0; i < want.values.size(); ++i) {
          CATCH_INFO("tensor=" << want.names[i]);
          const double tol = fp64 ? 1e-10 : (i == 0 ? 1e-5 : 1e-4);
          CATCH_CHECK(relative_error(got.values[i], want.values[i], i ? gradient_floor(want) : 0) <
                      tol);
        }
      }
    }
  }
}

CATCH_TEST_CASE("the fused kernel is registered for the CPU and used through the seam") {
  CATCH_INFO(attnbench::join(attnbench::registration_errors(), "; "));
  CATCH_CHECK(attnbench::registration_errors().empty());
#if defined(ATTNBENCH_CUDA)  // the CUDA build also registers kernels/cuda
  const std::vector<std::string> devices{"cpu", "cuda"};
#else
  const std::vector<std::string> devices{"cpu"};
#endif
  CATCH_CHECK(attnbench::kernels::fused_kernels().names() == devices);
  const auto* k = attnbench::kernels::find_fused_kernel(torch::kCPU);
  CATCH_REQUIRE(k != nullptr);
  CATCH_CHECK(k->name == "cpu-tiled");
  compare({"distance_bias", "per_head_over_len", false}, 70, torch::kFloat,
          [k](const torch::Tensor& q, const torch::Tensor& kk, const torch::Tensor& v,
              const FamilySpec& s) { return k->forward(q, kk, v, s); });
}

CATCH_TEST_CASE("16-bit inputs run in float32 and come back in their dtype") {
  const uint64_t seed = attnbench::testing::Seeds("16-bit inputs").next();
  CATCH_INFO(attnbench::testing::describe(seed));
  torch::manual_seed(seed);
  auto q = torch::randn({1, 2, 40, 16}), k = torch::randn({1, 2, 40, 16}),
       v = torch::randn({1, 2, 40, 16});
  FamilySpec spec;
  spec.normalizer = Normalizer::Elastic;
  spec.tau = torch::full({2}, -1.0);
  auto half = attnbench::kernels::cpu::fused_family_attention(
      q.to(torch::kBFloat16), k.to(torch::kBFloat16), v.to(torch::kBFloat16), spec);
  CATCH_CHECK(half.scalar_type() == torch::kBFloat16);
  auto want = attnbench::variants::eager_family_attention(
      q.to(torch::kBFloat16).to(torch::kFloat), k.to(torch::kBFloat16).to(torch::kFloat),
      v.to(torch::kBFloat16).to(torch::kFloat), spec);
  CATCH_CHECK(relative_error(half.to(torch::kFloat), want) < 1e-2);  // bf16 output rounding
}

CATCH_TEST_CASE("bad inputs are rejected with a message") {
  FamilySpec spec;
  auto q = torch::randn({1, 2, 8, 4});
  CATCH_REQUIRE_THROWS_WITH(
      attnbench::kernels::cpu::fused_family_attention(q, torch::randn({1, 2, 9, 4}), q, spec),
      Catch::Matchers::Contains("[B, H, T, D] with Tq <= T"));
  spec.normalizer = Normalizer::Elastic;
  spec.tau = torch::zeros({3});
  CATCH_REQUIRE_THROWS_WITH(attnbench::kernels::cpu::fused_family_attention(q, q, q, spec),
                            Catch::Matchers::Contains("tau must be [H] or [B, Tq, H]"));
  // The same reasons are what the registered kernel reports to dispatch instead of throwing.
  const auto* k = attnbench::kernels::find_fused_kernel(torch::kCPU);
  CATCH_REQUIRE(k != nullptr);
  CATCH_CHECK_THAT(k->unsupported(q, q, q, spec),
                   Catch::Matchers::Contains("tau must be [H] or [B, Tq, H]"));
  CATCH_CHECK(!k->supports(q, q, q, spec));
  spec.tau = torch::zeros({2});
  CATCH_CHECK(k->supports(q, q, q, spec));
  auto complex = q.to(torch::kComplexFloat);
  CATCH_CHECK_THAT(k->unsupported(complex, complex, complex, spec),
                   Catch::Matchers::Contains("floating-point"));
}

CATCH_TEST_CASE("fused softmax equals LibTorch's own causal attention") {
  // An outside reference that shares no code with ours (kernels/torch_compat.h).
  const uint64_t seed = attnbench::testing::Seeds("libtorch causal").next();
  CATCH_INFO(attnbench::testing::describe(seed));
  torch::manual_seed(seed);
  for (torch::ScalarType dtype : {torch::kFloat, torch::kDouble}) {
    auto o = torch::TensorOptions().dtype(dtype);
    auto q = torch::randn({2, 3, 131, 32}, o), k = torch::randn({2, 3, 131, 32}, o),
         v = torch::randn({2, 3, 131, 32}, o);
    auto want = attnbench::kernels::torch_causal_attention(q, k, v);
    auto got = attnbench::kernels::cpu::fused_family_attention(q, k, v, FamilySpec{});
    CATCH_CHECK(relative_error(got, want) < (dtype == torch::kDouble ? 1e-10 : 1e-5));
  }
}

CATCH_TEST_CASE("forgetting gate and sink logits: fused equals eager with the gradients of C and S_h") {
  // The score term C_i - C_j and the sink's o * sigmoid(lse - S_h) (kernels/attention_family.h),
  // each alone and with a position bias or Elastic-Softmax, on T beyond one tile.
  const int64_t B = 2, H = 3, T = 131, D = 16;
  for (torch::ScalarType dtype : {torch::kFloat, torch::kDouble}) {
    const double out_tol = dtype == torch::kDouble ? 1e-10 : 1e-5;
    const double grad_tol = dtype == torch::kDouble ? 1e-10 : 1e-4;
    for (const std::string cure : {"forget", "forget+alibi", "forget+elastic", "sink", "sink+bias"}) {
      CATCH_CAPTURE(cure, dtype);
      torch::manual_seed(5);
      auto opts = torch::TensorOptions().dtype(dtype);
      auto leaf = [](torch::Tensor t) { return t.requires_grad_(true); };
      auto q = torch::randn({B, H, T, D}, opts), k = torch::randn({B, H, T, D}, opts);
      auto v = torch::randn({B, H, T, D}, opts), dout = torch::randn({B, H, T, D}, opts);
      FamilySpec spec;
      if (has(cure, "forget"))  // log f_t in (-3, 0): a strong but finite decay
        spec.log_forget_cumsum = leaf((-3 * torch::rand({B, H, T}, opts)).cumsum(-1));
      if (has(cure, "sink")) spec.sink_logit = leaf(torch::randn({H}, opts));
      if (has(cure, "alibi"))
        spec.alibi_slopes = torch::tensor(attnbench::variants::alibi_slopes(H), torch::kFloat64);
      if (has(cure, "bias")) spec.distance_bias = leaf(torch::randn({H, 8}, opts) * 0.5);
      if (has(cure, "elastic")) {
        spec.normalizer = Normalizer::Elastic;
        spec.tau = leaf(torch::full({H}, -0.5, opts));
      }
      auto grads = [&](const Attention& attention) {
        std::vector<torch::Tensor> ins = {q, k, v, spec.log_forget_cumsum, spec.sink_logit,
                                          spec.distance_bias, spec.tau};
        for (auto& t : ins)
          if (t.defined()) t.requires_grad_(true), t.mutable_grad() = torch::Tensor();
        auto out = attention(q, k, v, spec);
        (out * dout).sum().backward();
        std::vector<torch::Tensor> r = {out.detach()};
        for (auto& t : ins)
          if (t.defined()) r.push_back(t.grad());
        return r;
      };
      const auto want = grads(eager), got = grads(fused());
      CATCH_REQUIRE(got.size() == want.size());
      CATCH_CHECK(relative_error(got[0], want[0]) < out_tol);
      for (size_t i = 1; i < want.size(); ++i) {
        CATCH_CAPTURE(i);
        CATCH_REQUIRE(got[i].defined());
        CATCH_CHECK(relative_error(got[i], want[i], max_abs(want[1])) < grad_tol);
      }
    }
  }
}

}  // namespace fused_attention_test
