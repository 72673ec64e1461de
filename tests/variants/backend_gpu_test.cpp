// Backend dispatch on the GPU (gpu tag): every registered variant on CUDA tensors, "auto" as close
// to eager in float64 as float32 eager is (output and every gradient) whether the CUDA kernel or
// eager ran, and "fused" running what "auto" ran or refusing (Elastic-Softmax, sigmoid). An executable of its own
// (tests/CMakeLists.txt, attnbench_gpu_test) that exits 77, which CTest reports as Skipped, where
// no CUDA device is usable.
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "tests/variants/support.h"
#include "variants/eager.h"
#include "variants/family.h"

using namespace attnbench;
using namespace attnbench::variants;
using Catch::Matchers::Contains;

namespace {
// The names of every autograd node behind `t`: a fused kernel's node (SDPA's, FamilyCudaAttention)
// appears in it where eager's ops would. The whole graph, not the output's node: a variant may
// apply ops after the attention (gated attention's sigmoid gate), which end both graphs alike.
std::set<std::string> nodes_of(const torch::Tensor& t) {
  std::set<std::string> names;
  std::set<const torch::autograd::Node*> seen;
  std::vector<const torch::autograd::Node*> stack;
  if (t.grad_fn()) stack.push_back(t.grad_fn().get());
  while (!stack.empty()) {
    const auto* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    names.insert(n->name());
    for (const auto& e : n->next_edges())
      if (e.function) stack.push_back(e.function.get());
  }
  return names;
}

// max |got - exact| / max |exact|, in float64, the denominator at least 1e-8 (a gradient that is
// 0 throughout).
double relative(const torch::Tensor& got, const torch::Tensor& exact) {
  return (got.to(torch::kDouble) - exact).abs().max().item<double>() /
         std::max(exact.abs().max().item<double>(), 1e-8);
}

// float32 eager is itself only an approximation of the exact result, so "auto" is judged by how far
// eager errs, as FlashAttention's tests judge a kernel: against the same computation in float64, the
// kernel may err at most twice as much as float32 eager does, plus 8 float32 epsilons for a tensor
// that eager happens to get almost exactly.
constexpr double kEps32 = 1.1920928955078125e-07;
bool within_eager_error(double kernel_error, double eager_error) {
  return kernel_error <= 2 * eager_error + 8 * kEps32;
}
}  // namespace

CATCH_TEST_CASE("every registered variant on CUDA, auto equals eager and fused runs the same or "
                "refuses", "[gpu]") {
  CATCH_REQUIRE(kernels::find_fused_kernel(torch::kCUDA) != nullptr);
  const int64_t B = 2, H = 4, T = 192, D = 16, C = 32;  // T % 128 == 64: the guarded route too
  torch::Device cuda(torch::kCUDA);
  int fused_runs = 0;
  for (const auto& c : test::registered_cases()) {
    CATCH_CAPTURE(c.label());
    auto eager = make_variant(test::context(c, H, D, C, "eager"));
    torch::manual_seed(5);
    test::randomize_parameters(*eager, test::context(c, H, D, C).attention.params);
    auto build = [&](const std::string& backend) {
      auto m = make_variant(test::context(c, H, D, C, backend));
      torch::NoGradGuard no_grad;
      auto want = test::params_of(*eager);
      for (auto& [name, p] : test::params_of(*m)) p.copy_(want.at(name));
      m->to(cuda);
      return m;
    };
    auto automatic = build("auto");
    auto exact = build("eager");
    exact->to(torch::kDouble);
    eager->to(cuda);
    auto opts = torch::TensorOptions().device(cuda);
    auto q = torch::randn({B, H, T, D}, opts), k = torch::randn({B, H, T, D}, opts);
    auto v = torch::randn({B, H, T, D}, opts), x = torch::randn({B, T, C}, opts);
    auto g = torch::randn({B, H, T, D}, opts);
    auto run = [&](AttentionVariantImpl& m, std::set<std::string>* nodes,
                   torch::ScalarType dtype = torch::kFloat) {
      std::vector<torch::Tensor> leaves;
      for (auto* t : {&q, &k, &v}) leaves.push_back(t->detach().to(dtype).requires_grad_(true));
      for (auto& [name, p] : test::params_of(m)) p.mutable_grad() = torch::Tensor();
      auto out = m.forward(leaves[0], leaves[1], leaves[2], x.to(dtype));
      *nodes = nodes_of(out);
      (out * g.to(dtype)).sum().backward();
      std::vector<torch::Tensor> r = {out.detach()};
      for (auto& l : leaves) r.push_back(l.grad());
      for (auto& [name, p] : test::params_of(m)) {
        r.push_back(p.grad().defined() ? p.grad() : torch::zeros_like(p));
      }
      return r;
    };
    std::set<std::string> eager_nodes, auto_nodes, fused_nodes, exact_nodes;
    const auto want = run(*eager, &eager_nodes), got = run(*automatic, &auto_nodes);
    const auto reference = run(*exact, &exact_nodes, torch::kDouble);
    CATCH_REQUIRE(got.size() == want.size());
    CATCH_REQUIRE(reference.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      CATCH_CAPTURE(i);
      CATCH_CHECK(!torch::isnan(got[i]).any().item<bool>());
      const double kernel_error = relative(got[i], reference[i]);
      const double eager_error = relative(want[i], reference[i]);
      CATCH_CAPTURE(kernel_error, eager_error);
      CATCH_CHECK(within_eager_error(kernel_error, eager_error));
    }
    if (auto_nodes == eager_nodes) {
      CATCH_CHECK_THROWS_AS(run(*build("fused"), &fused_nodes), UsageError);
      continue;
    }
    ++fused_runs;
    run(*build("fused"), &fused_nodes);
    CATCH_CHECK(fused_nodes == auto_nodes);
  }
  CATCH_CHECK(fused_runs > 0);
}
