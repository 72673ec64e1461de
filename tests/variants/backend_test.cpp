// Backend dispatch (docs/kernels.md, "Dispatch"): eager | fused | auto, a kernel's supports(), the
// fallback when no fused kernel exists for a device, and fused == eager for every registered
// variant wherever the fused path runs.
#include <torch/torch.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "core/common/registry.h"
#include "kernels/sdpa.h"
#include "tests/variants/support.h"
#include "variants/eager.h"
#include "variants/family.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace backend_test {

using namespace attnbench;
using namespace attnbench::variants;
using Catch::Matchers::Contains;

namespace {
torch::Tensor never_called(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
                           const kernels::FamilySpec&) {
  throw std::logic_error("the stand-in kernel must not run");
}

// A stand-in kernel that serves every spec but the renormalised Elastic-Softmax.
kernels::FusedKernel no_renormalize_kernel() {
  return {"no-renormalize", never_called,
          [](const torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
             const kernels::FamilySpec& spec) -> std::string {
            return spec.renormalize ? "renormalised Elastic-Softmax" : "";
          },
          {}};
}

// The name of the autograd node that produced `t`: tells the fused kernel's node from eager's ops.
// The names of every autograd node behind t, sorted: which computation ran (a fused kernel's node
// may sit under later ops, e.g. an output gate's multiplication).
std::string node_of(const torch::Tensor& t) {
  std::vector<std::string> names;
  std::set<const torch::autograd::Node*> seen;
  std::vector<const torch::autograd::Node*> todo = {t.grad_fn().get()};
  while (!todo.empty()) {
    const torch::autograd::Node* n = todo.back();
    todo.pop_back();
    if (!n || !seen.insert(n).second) continue;
    names.push_back(n->name());
    for (const auto& edge : n->next_edges()) todo.push_back(edge.function.get());
  }
  std::sort(names.begin(), names.end());
  return join(names, ",");
}

// max |got - want| / max |want|, the denominator at least 1e-8 (a gradient that is 0 throughout).
double relative(const torch::Tensor& got, const torch::Tensor& want) {
  return (got - want).abs().max().item<double>() /
         std::max(want.abs().max().item<double>(), 1e-8);
}
}  // namespace

CATCH_TEST_CASE("backend choice: fused without a kernel is a clear error, auto falls back") {
  const kernels::FusedKernel stand_in = no_renormalize_kernel();
  auto choose = [](const std::string& backend, const kernels::FusedKernel* k,
                   const std::string& device, bool weights) {
    return choose_fused_kernel(backend, "lazy", device, k, "", weights);
  };
  // No kernel for the device.
  CATCH_REQUIRE_THROWS_AS(choose("fused", nullptr, "cuda", false), UsageError);
  CATCH_REQUIRE_THROWS_WITH(choose("fused", nullptr, "cuda", false),
                            Contains("no fused attention kernel") && Contains("cuda") &&
                                Contains("'lazy'") && Contains("\"auto\"") &&
                                Contains("\"eager\""));
  CATCH_CHECK(choose("auto", nullptr, "cuda", false) == nullptr);
  CATCH_CHECK(choose("eager", nullptr, "cuda", false) == nullptr);
  // A kernel exists and supports the call.
  CATCH_CHECK(choose("fused", &stand_in, "cpu", false) == &stand_in);
  CATCH_CHECK(choose("auto", &stand_in, "cpu", false) == &stand_in);
  CATCH_CHECK(choose("eager", &stand_in, "cpu", false) == nullptr);
  // Requested weights always take eager, even under "fused".
  CATCH_CHECK(choose("auto", &stand_in, "cpu", true) == nullptr);
  CATCH_CHECK(choose("fused", &stand_in, "cpu", true) == nullptr);
  CATCH_CHECK(choose("fused", nullptr, "cpu", true) == nullptr);
  // A kernel that supports the call but is not validated for it: "auto" runs eager, "fused" opts
  // in; an unsupported call stays unsupported whatever its validation says.
  CATCH_CHECK(choose_fused_kernel("auto", "lazy", "cuda", &stand_in, "", false, "untested") ==
              nullptr);
  CATCH_CHECK(choose_fused_kernel("fused", "lazy", "cuda", &stand_in, "", false, "untested") ==
              &stand_in);
  CATCH_CHECK(choose_fused_kernel("eager", "lazy", "cuda", &stand_in, "", false, "untested") ==
              nullptr);
  CATCH_REQUIRE_THROWS_WITH(
      choose_fused_kernel("fused", "lazy", "cuda", &stand_in, "no tau", false, "untested"),
      Contains("no tau"));
  // The one list of backend names.
  CATCH_CHECK(config::attention_backends() == std::vector<std::string>{"auto", "eager", "fused"});
  CATCH_REQUIRE_THROWS_WITH(choose("fast", &stand_in, "cpu", false),
                            Contains("not one of auto, eager, fused"));
}

CATCH_TEST_CASE("an incremental step runs fused only where the kernel takes a query offset") {
  // Fewer queries than keys: a kernel without query_offset is never asked (eager under every
  // backend, "fused" included); one with it is chosen as for a square call.
  Registry<kernels::FusedKernel> square(kernels::fused_kernels().kind()),
      offset(kernels::fused_kernels().kind());
  const kernels::FusedKernel& square_only = square.add("cpu", no_renormalize_kernel());
  kernels::FusedKernel with_offset = no_renormalize_kernel();
  with_offset.query_offset = true;
  const kernels::FusedKernel& offset_kernel = offset.add("cpu", std::move(with_offset));
  const auto q = torch::randn({1, 2, 3, 4}), k = torch::randn({1, 2, 7, 4});
  const kernels::FamilySpec spec;
  for (const std::string backend : {"auto", "fused", "eager"}) {
    CATCH_CAPTURE(backend);
    CATCH_CHECK(choose_fused_kernel(backend, "lazy", q, k, k, spec, false, square) == nullptr);
    CATCH_CHECK(choose_fused_kernel(backend, "lazy", k, k, k, spec, false, square) ==
                (backend == "eager" ? nullptr : &square_only));
    CATCH_CHECK(choose_fused_kernel(backend, "lazy", q, k, k, spec, false, offset) ==
                (backend == "eager" ? nullptr : &offset_kernel));
    CATCH_CHECK(choose_fused_kernel(backend, "lazy", q, k, k, spec, true, offset) == nullptr);
  }
  // The registered CPU kernel takes the offset.
  const auto* cpu = kernels::find_fused_kernel(torch::kCPU);
  CATCH_REQUIRE(cpu != nullptr);
  CATCH_CHECK(choose_fused_kernel("auto", "lazy", q, k, k, spec, false) == cpu);
}

CATCH_TEST_CASE("a spec the kernel does not support: auto falls back to eager, fused refuses") {
  Registry<kernels::FusedKernel> local(kernels::fused_kernels().kind());
  const kernels::FusedKernel& stub = local.add("cpu", no_renormalize_kernel());
  auto q = torch::randn({1, 2, 5, 4});
  kernels::FamilySpec spec;
  spec.normalizer = kernels::Normalizer::Elastic;
  spec.tau = torch::full({2}, -1.0);
  auto choose = [&](const std::string& backend) {
    return choose_fused_kernel(backend, "lazy", q, q, q, spec, false, local);
  };
  CATCH_REQUIRE(stub.supports(q, q, q, spec));
  CATCH_CHECK(choose("auto") == &stub);
  CATCH_CHECK(choose("fused") == &stub);

  spec.renormalize = true;
  CATCH_REQUIRE(!stub.supports(q, q, q, spec));
  CATCH_CHECK(choose("auto") == nullptr);
  CATCH_CHECK(choose("eager") == nullptr);
  CATCH_REQUIRE_THROWS_AS(choose("fused"), UsageError);
  CATCH_REQUIRE_THROWS_WITH(choose("fused"), Contains("'lazy'") && Contains("device cpu") &&
                                                 Contains("renormalised Elastic-Softmax") &&
                                                 Contains("\"auto\"") && Contains("\"eager\""));
}

CATCH_TEST_CASE("the CPU kernel says which inputs it does not serve") {
  const kernels::FusedKernel* cpu = kernels::find_fused_kernel(torch::kCPU);
  CATCH_REQUIRE(cpu != nullptr);
  auto q = torch::randn({2, 3, 5, 4});
  kernels::FamilySpec spec;
  // Both position biases, every tau shape, renormalisation, float and double: served.
  spec.alibi_slopes = torch::rand({3}, torch::kFloat64);
  spec.distance_bias = torch::zeros({3, 2});
  CATCH_CHECK(cpu->supports(q, q, q, spec));
  auto qd = q.to(torch::kDouble);
  CATCH_CHECK(cpu->supports(qd, qd, qd, spec));
  spec.normalizer = kernels::Normalizer::Elastic;
  spec.renormalize = true;
  for (auto shape : {std::vector<int64_t>{3}, std::vector<int64_t>{2, 5, 3}}) {
    spec.tau = torch::zeros(shape);
    CATCH_CHECK(cpu->supports(q, q, q, spec));
  }
  // A tau of another shape is named, and "fused" refuses it with that reason.
  spec.tau = torch::zeros({5, 3});
  CATCH_CHECK_THAT(cpu->unsupported(q, q, q, spec), Contains("tau must be [H] or [B, Tq, H]"));
  CATCH_CHECK(choose_fused_kernel("auto", "elastic", q, q, q, spec, false) == nullptr);
  CATCH_REQUIRE_THROWS_WITH(choose_fused_kernel("fused", "elastic", q, q, q, spec, false),
                            Contains("'elastic'") && Contains("tau must be [H] or [B, Tq, H]"));
  // Mismatched shapes and non-floating dtypes.
  spec.tau = torch::zeros({3});
  CATCH_CHECK_THAT(cpu->unsupported(q, torch::randn({2, 3, 6, 4}), q, spec), Contains("k, v [B, H, T, D] with Tq <= T"));
  auto qi = q.to(torch::kInt);
  CATCH_CHECK_THAT(cpu->unsupported(qi, qi, qi, spec), Contains("floating-point"));
}

CATCH_TEST_CASE("a fused kernel registered twice is recorded, not thrown") {
  auto& errors = attnbench::detail::registration_error_list();
  const size_t before = errors.size();
  Registry<kernels::FusedKernel> local(kernels::fused_kernels().kind());
  const kernels::FusedKernel& first = local.add("cpu", no_renormalize_kernel());
  kernels::FusedKernel second = no_renormalize_kernel();
  second.name = "second";
  CATCH_CHECK(&local.add("cpu", second) == &first);  // the first registration stays
  CATCH_CHECK(local.find("cpu")->name == "no-renormalize");
  CATCH_REQUIRE(errors.size() == before + 1);
  CATCH_CHECK_THAT(errors.back(), Contains("fused attention kernel") && Contains("'cpu'") &&
                                      Contains("registered twice"));
  // A kernel that cannot say what it supports is refused and recorded too (global registry).
  kernels::register_fused_kernel("test-device", {"incomplete", never_called, {}, {}});
  CATCH_CHECK(kernels::fused_kernels().find("test-device") == nullptr);
  CATCH_REQUIRE(errors.size() == before + 2);
  CATCH_CHECK_THAT(errors.back(), Contains("'test-device'") && Contains("unsupported"));
  errors.resize(before);  // the program's own registrations stay checked by the other tests
}

CATCH_TEST_CASE("a variant on CPU runs the registered fused kernel or eager/an error without one") {
  const int64_t B = 1, H = 2, T = 16, D = 8, C = 8;
  torch::manual_seed(1);
  auto q = torch::randn({B, H, T, D}), k = torch::randn({B, H, T, D});
  auto v = torch::randn({B, H, T, D}), x = torch::randn({B, T, C});
  const test::Case lazy{"lazy", {}};
  auto eager = make_variant(test::context(lazy, H, D, C, "eager"));
  auto reference = eager->forward(q, k, v, x);
  auto fused = make_variant(test::context(lazy, H, D, C, "fused"));
  auto automatic = make_variant(test::context(lazy, H, D, C, "auto"));
  if (kernels::find_fused_kernel(torch::kCPU) == nullptr) {
    CATCH_REQUIRE_THROWS_WITH(fused->forward(q, k, v, x),
                              Contains("no fused attention kernel is registered for device cpu"));
    CATCH_CHECK(torch::equal(automatic->forward(q, k, v, x), reference));
  } else {
    // The kernel's own accuracy is tested in tests/kernels; here: "fused" and "auto" both run it
    // (its autograd node, not eager's), and it computes the same attention.
    auto qg = q.clone().requires_grad_(true);
    auto by_fused = fused->forward(qg, k, v, x), by_auto = automatic->forward(qg, k, v, x);
    auto by_eager = eager->forward(qg, k, v, x);
    CATCH_CHECK(node_of(by_fused) == node_of(by_auto));
    CATCH_CHECK(node_of(by_fused) != node_of(by_eager));
    CATCH_CHECK((by_fused - reference).abs().max().item<double>() < 1e-4);
    CATCH_CHECK((by_auto - reference).abs().max().item<double>() < 1e-4);
  }
  // Weights requested: eager even under "fused", with identical results.
  torch::Tensor w;
  CATCH_CHECK(torch::equal(fused->forward(q, k, v, x, &w), reference));
  CATCH_CHECK(w.sizes() == torch::IntArrayRef({B, H, T, T}));
}

CATCH_TEST_CASE("every registered variant: auto equals eager and fused runs the same or refuses") {
  // Through the variants' public API only, so that it holds for variants outside the family too:
  // "auto" either runs a fused kernel, which must then agree with eager (output and every
  // gradient, float64), or runs eager itself (identical results); "fused" runs what "auto" ran
  // or, where "auto" fell back, refuses with a UsageError that suggests "auto" or "eager".
  const int64_t B = 2, H = 3, T = 70, D = 8, C = 6;  // T beyond one 64-row tile
  int fused_runs = 0;
  for (const auto& c : test::registered_cases()) {
    CATCH_CAPTURE(c.label());
    auto eager = test::build(c, H, D, C, "eager");
    torch::manual_seed(23);
    test::randomize_parameters(*eager, test::context(c, H, D, C).attention.params);
    // The variant under `backend` with eager's parameters (building may already refuse "fused").
    auto build = [&](const std::string& backend) {
      auto m = test::build(c, H, D, C, backend);
      torch::NoGradGuard no_grad;
      auto want = test::params_of(*eager);
      for (auto& [name, p] : test::params_of(*m)) p.copy_(want.at(name));
      return m;
    };
    auto automatic = build("auto");
    auto f64 = torch::kFloat64;
    auto q = torch::randn({B, H, T, D}, f64), k = torch::randn({B, H, T, D}, f64);
    auto v = torch::randn({B, H, T, D}, f64), x = torch::randn({B, T, C}, f64);
    auto g = torch::randn({B, H, T, D}, f64);
    // Output, then the gradients of q, k, v, x and each parameter, for one module.
    auto run = [&](AttentionVariantImpl& m, std::string* node) {
      std::vector<torch::Tensor> ins = {q, k, v, x};
      for (auto& [name, p] : test::params_of(m)) ins.push_back(p);
      for (size_t i = 4; i < ins.size(); ++i) ins[i].mutable_grad() = torch::Tensor();
      std::vector<torch::Tensor> leaves;
      for (size_t i = 0; i < 4; ++i) leaves.push_back(ins[i].detach().requires_grad_(true));
      auto out = m.forward(leaves[0], leaves[1], leaves[2], leaves[3]);
      *node = node_of(out);
      (out * g).sum().backward();
      std::vector<torch::Tensor> r = {out.detach()};
      for (size_t i = 0; i < ins.size(); ++i) {
        auto grad = i < 4 ? leaves[i].grad() : ins[i].grad();
        r.push_back(grad.defined() ? grad : torch::zeros_like(ins[i]));
      }
      return r;
    };
    std::string eager_node, auto_node, fused_node;
    const auto want = run(*eager, &eager_node), by_auto = run(*automatic, &auto_node);
    CATCH_REQUIRE(by_auto.size() == want.size());
    if (auto_node == eager_node) {  // eager ran: the very same computation
      for (size_t i = 0; i < want.size(); ++i) CATCH_CHECK(torch::equal(by_auto[i], want[i]));
      CATCH_INFO("\"auto\" ran eager, so \"fused\" must refuse rather than run eager silently "
                 "(variants/family.h, choose_fused_kernel: pass no kernel and the reason)");
      auto fused_run = [&] { run(*build("fused"), &fused_node); };
      CATCH_REQUIRE_THROWS_AS(fused_run(), UsageError);
      CATCH_REQUIRE_THROWS_WITH(fused_run(), Contains("\"auto\"") && Contains("\"eager\""));
      continue;
    }
    ++fused_runs;
    for (size_t i = 0; i < want.size(); ++i) {
      CATCH_CAPTURE(i);
      CATCH_CHECK(relative(by_auto[i], want[i]) < 1e-10);
    }
    const auto by_fused = run(*build("fused"), &fused_node);
    CATCH_CHECK(fused_node == auto_node);
    for (size_t i = 0; i < want.size(); ++i) CATCH_CHECK(torch::equal(by_fused[i], by_auto[i]));
  }
  // On the CPU the family's kernel serves every family option: the comparison above did happen.
  if (kernels::find_fused_kernel(torch::kCPU)) CATCH_CHECK(fused_runs > 0);
}

CATCH_TEST_CASE("a device without a fused kernel: fused is a clear error") {
  // No fused kernel exists for the meta device (shapes only, no data), whatever kernels/ provides.
  CATCH_REQUIRE(kernels::find_fused_kernel(torch::kMeta) == nullptr);
  const test::Case plain{"softmax", {{"position", config::Value{std::string("none")}}}};
  auto meta = torch::TensorOptions().device(torch::kMeta);
  auto q = torch::empty({1, 2, 5, 4}, meta), x = torch::empty({1, 5, 8}, meta);
  auto fused = make_variant(test::context(plain, 2, 4, 8, "fused"));
  CATCH_REQUIRE_THROWS_WITH(fused->forward(q, q, q, x),
                            Contains("no fused attention kernel is registered for device meta"));
}

CATCH_TEST_CASE("an unknown backend is rejected when the variant is built") {
  CATCH_REQUIRE_THROWS_WITH(make_variant(test::context({"softmax", {}}, 2, 4, 8, "fusde")),
                            Contains("did you mean 'fused'"));
}

CATCH_TEST_CASE("CUDA dispatch: the SDPA kernel's rules route every registered variant") {
  // The CUDA kernel (kernels/cuda/cuda_kernel.cpp, CUDA build only) sends the softmax forms to SDPA
  // under kernels::sdpa_unsupported's rules plus a device check; a stand-in with those rules
  // (device aside) shows where each registered variant's softmax forms run on a GPU, and that
  // SDPA alone refuses Elastic-Softmax, naming why (the CUDA kernel's Elastic route is its own).
  Registry<kernels::FusedKernel> local(kernels::fused_kernels().kind());
  const kernels::FusedKernel& sdpa =
      local.add("cpu", {"cuda-sdpa (stand-in)", never_called, kernels::sdpa_unsupported, {}});
  const int64_t B = 2, H = 4, T = 64, D = 16, C = 64;
  auto q = torch::randn({B, H, T, D}).to(torch::kBFloat16), x = torch::randn({B, T, C});
  int served = 0, refused = 0;
  for (const auto& c : test::registered_cases()) {
    CATCH_CAPTURE(c.label());
    auto m = make_variant(test::context(c, H, D, C, "auto"));
    auto* family = dynamic_cast<FamilyAttentionImpl*>(m.get());
    if (!family) continue;  // outside the family (sigmoid): eager, "fused" refused when built
    const kernels::FamilySpec spec = family->spec(x, torch::kCPU);
    const std::string why = sdpa.unsupported(q, q, q, spec);
    auto choose = [&](const std::string& backend) {
      return choose_fused_kernel(backend, c.variant, q, q, q, spec, false, local);
    };
    CATCH_CHECK(choose("eager") == nullptr);
    if (spec.sink_logit.defined() || spec.log_forget_cumsum.defined()) {
      ++refused;  // sink logits and the forgetting gate are fused on the CPU only
      CATCH_CHECK_THAT(why, Contains("no CUDA kernel yet"));
      CATCH_CHECK(choose("auto") == nullptr);
      CATCH_CHECK_THROWS_WITH(choose("fused"), Contains("no CUDA kernel yet"));
      continue;
    }
    switch (spec.normalizer) {
      case kernels::Normalizer::Softmax:
        ++served;
        CATCH_CHECK(why.empty());
        CATCH_CHECK(choose("auto") == &sdpa);
        CATCH_CHECK(choose("fused") == &sdpa);
        CATCH_CHECK(choose_fused_kernel("auto", c.variant, q, q, q, spec, true, local) == nullptr);
        break;
      case kernels::Normalizer::Elastic:
        ++refused;
        CATCH_CHECK_THAT(why, Contains("Elastic-Softmax"));
        CATCH_CHECK(choose("auto") == nullptr);
        CATCH_CHECK_THROWS_WITH(choose("fused"), Contains("'" + c.variant + "'") &&
                                                     Contains("Elastic-Softmax") &&
                                                     Contains("\"auto\""));
        break;
    }
  }
  CATCH_CHECK(served >= 3);   // softmax (rope, none, distance_bias), alibi, rope_bias
  CATCH_CHECK(refused >= 2);  // elastic, lazy
  // The message as a GPU run prints it.
  CATCH_CHECK_THROWS_WITH(
      choose_fused_kernel("fused", "lazy", "cuda", &sdpa, "Elastic-Softmax has no CUDA kernel yet",
                          false),
      Contains("device cuda") && Contains("Elastic-Softmax"));
}

}  // namespace backend_test
