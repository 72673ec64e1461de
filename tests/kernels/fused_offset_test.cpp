// The fused CPU kernel with queries at an offset (an incremental decoding step: the last Tq of T
// positions, kernels/cpu/family_kernel.h) against the eager reference, for every family
// combination: the output and every gradient in float64 to 1e-10, and the output in float32 to
// the square kernel's 1e-5. The arithmetic is the square kernel's (tests/kernels/
// fused_attention_test.cpp); what is new here is where each query sits. Fixed seeds.
#include "kernels/cpu/fused_attention.h"

#include <torch/torch.h>

#include <string>
#include <vector>

#include "kernels/attention_family.h"
#include "variants/eager.h"
#include "variants/position.h"

// After every torch header (docs/toolchain.md, "Catch2 and glog's CHECK").
#include <catch2/catch.hpp>

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace fused_offset_test {

namespace {

using attnbench::kernels::FamilySpec;
using attnbench::kernels::Normalizer;

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Every part of the family once: positions, normalisers (tau per head, per head constant, per
// token; renormalised or not) and the two cures that enter the kernel (forgetting gate, sink).
std::vector<std::string> cases() {
  return {"softmax",          "rope",
          "alibi",            "distance_bias",
          "alibi+distance_bias+elastic_head", "elastic_head",
          "elastic_head+renorm",              "elastic_const+distance_bias",
          "elastic_token+renorm+rope",        "elastic_token+distance_bias",
          "forget",           "forget+elastic_head",
          "sink",             "sink+distance_bias"};
}

// Inputs of T positions; spec's per-query tensors (per-token tau) cover the last Tq.
struct Inputs {
  torch::Tensor q, k, v, dout;  // q, dout [B, H, Tq, D]; k, v [B, H, T, D]
  FamilySpec spec;
  bool rope = false;
  std::vector<torch::Tensor> leaves() const {
    return {q, k, v, spec.tau, spec.distance_bias, spec.log_forget_cumsum, spec.sink_logit};
  }
};

Inputs draw(const std::string& c, int64_t T, int64_t Tq, torch::ScalarType dtype) {
  const int64_t B = 2, H = 3, D = 16;
  torch::manual_seed(static_cast<uint64_t>(T * 1000 + Tq));
  const auto o = torch::TensorOptions().dtype(dtype);
  Inputs in;
  in.q = torch::randn({B, H, Tq, D}, o) * 1.5;
  in.k = torch::randn({B, H, T, D}, o);
  in.v = torch::randn({B, H, T, D}, o);
  in.dout = torch::randn({B, H, Tq, D}, o);
  in.rope = has(c, "rope");
  FamilySpec& s = in.spec;
  if (has(c, "alibi")) s.alibi_slopes = torch::rand({H}, torch::kFloat64) * 0.3;
  if (has(c, "distance_bias")) s.distance_bias = torch::randn({H, 40}, o) * 0.5;
  if (has(c, "forget")) s.log_forget_cumsum = (-2 * torch::rand({B, H, T}, o)).cumsum(-1);
  if (has(c, "sink")) s.sink_logit = torch::randn({H}, o);
  if (has(c, "elastic")) {
    s.normalizer = Normalizer::Elastic;
    s.renormalize = has(c, "renorm");
    s.tau_over_len = !has(c, "const");
    const auto shape = has(c, "token") ? std::vector<int64_t>{B, Tq, H} : std::vector<int64_t>{H};
    s.tau = s.tau_over_len ? torch::rand(shape, o) * 1.8 - 1.5 : torch::rand(shape, o) * 0.2 - 0.1;
  }
  return in;
}

using Attention = torch::Tensor (*)(const torch::Tensor&, const torch::Tensor&,
                                    const torch::Tensor&, const FamilySpec&);

torch::Tensor eager(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                    const FamilySpec& s) {
  return attnbench::variants::eager_family_attention(q, k, v, s);
}

torch::Tensor fused(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                    const FamilySpec& s) {
  return attnbench::kernels::cpu::fused_family_attention(q, k, v, s);
}

// The output, then the gradient of every defined input (RoPE at the queries' own positions).
std::vector<torch::Tensor> outputs(const Inputs& in, Attention attention, bool gradients) {
  std::vector<torch::Tensor> ins = in.leaves();
  for (auto& t : ins)
    if (t.defined() && gradients) t = t.detach().clone().requires_grad_(true);
  FamilySpec s = in.spec;
  s.tau = ins[3], s.distance_bias = ins[4], s.log_forget_cumsum = ins[5], s.sink_logit = ins[6];
  const int64_t first = in.k.size(2) - in.q.size(2);
  const auto q = in.rope ? attnbench::variants::apply_rope(ins[0], {10000.0}, first) : ins[0];
  const auto k = in.rope ? attnbench::variants::apply_rope(ins[1], {10000.0}) : ins[1];
  const torch::Tensor out = attention(q, k, ins[2], s);
  std::vector<torch::Tensor> r = {out.detach()};
  if (!gradients) return r;
  (out * in.dout).sum().backward();
  for (const auto& t : ins)
    if (t.defined()) r.push_back(t.grad());
  return r;
}

double relative_error(const torch::Tensor& got, const torch::Tensor& want, double floor) {
  const double err = (got - want).abs().max().item<double>();
  return err / std::max(want.abs().max().item<double>(), floor);
}

}  // namespace

CATCH_TEST_CASE("queries at an offset: fused equals eager for every family part") {
  const auto* kernel = attnbench::kernels::find_fused_kernel(torch::kCPU);
  CATCH_REQUIRE(kernel != nullptr);
  CATCH_CHECK(kernel->query_offset);
  for (const std::string& c : cases()) {
    for (auto [T, Tq] : std::vector<std::pair<int64_t, int64_t>>{{70, 1}, {70, 3}, {131, 69},
                                                                 {131, 131}}) {
      CATCH_CAPTURE(c, T, Tq);
      const Inputs in64 = draw(c, T, Tq, torch::kDouble);
      CATCH_CHECK(kernel->supports(in64.q, in64.k, in64.v, in64.spec));
      const auto want = outputs(in64, eager, true), got = outputs(in64, fused, true);
      CATCH_REQUIRE(got.size() == want.size());
      const double floor = want[1].abs().max().item<double>();  // the scale of dq
      for (size_t i = 0; i < want.size(); ++i) {
        CATCH_CAPTURE(i);
        CATCH_REQUIRE(got[i].sizes() == want[i].sizes());
        CATCH_CHECK(relative_error(got[i], want[i], i == 0 ? 1e-300 : floor) < 1e-10);
      }
      const Inputs in32 = draw(c, T, Tq, torch::kFloat);
      CATCH_CHECK(relative_error(outputs(in32, fused, false)[0], outputs(in32, eager, false)[0],
                                 1e-300) < 1e-5);
    }
  }
}

CATCH_TEST_CASE("queries at an offset: shapes the kernel refuses") {
  const auto* kernel = attnbench::kernels::find_fused_kernel(torch::kCPU);
  CATCH_REQUIRE(kernel != nullptr);
  const auto q = torch::randn({1, 2, 5, 4}), k = torch::randn({1, 2, 8, 4});
  FamilySpec spec;
  CATCH_CHECK(kernel->supports(q, k, k, spec));
  CATCH_CHECK_THAT(kernel->unsupported(k, q, q, spec), Catch::Matchers::Contains("Tq <= T"));
  spec.normalizer = Normalizer::Elastic;
  spec.tau = torch::zeros({1, 8, 2});  // per token over all positions, not the 5 queries
  CATCH_CHECK_THAT(kernel->unsupported(q, k, k, spec),
                   Catch::Matchers::Contains("tau must be [H] or [B, Tq, H]"));
  spec.tau = torch::zeros({1, 5, 2});
  CATCH_CHECK(kernel->supports(q, k, k, spec));
}

}  // namespace fused_offset_test
