// The defining property of each sink cure that is a family option (docs/variants.md, "Sink cures"),
// on both paths ("eager", and "auto", which runs the CPU kernel): softmax1's rows sum below 1, a
// sink logit at -inf is softmax, a forget gate of 1 is softmax, a zero output gate halves the
// output, SSMax gives row 0 all its weight and sharpens long rows.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "tests/variants/support.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace sink_cures_test {

using namespace attnbench;
using namespace attnbench::variants;
using config::Value;

namespace {
const auto f64 = torch::kFloat64;
constexpr int64_t B = 2, H = 3, T = 9, D = 4, C = 6;

using test::Inputs;
using test::max_diff;
Inputs draw(uint64_t seed) { return test::draw_inputs(seed, B, H, T, D, C); }

void set(torch::nn::Module& m, const std::string& name, double value) {
  torch::NoGradGuard no_grad;
  test::params_of(m).at(name).fill_(value);
}

}  // namespace

CATCH_TEST_CASE("softmax1: every row of weights sums strictly between 0 and 1") {
  const Inputs in = draw(1);
  auto m = test::build({"softmax1", {}}, H, D, C);
  torch::Tensor w;
  m->forward(in.q, in.k, in.v, in.x, &w);
  const auto rows = w.sum(-1);
  CATCH_CHECK(rows.max().item<double>() < 1.0);
  CATCH_CHECK(rows.min().item<double>() > 0.0);
  // Row 0 sees one key: e^s / (1 + e^s) = sigmoid(s_00).
  const auto s00 = (in.q * in.k).sum(-1).select(2, 0) / std::sqrt(double(D));  // no RoPE at 0
  CATCH_CHECK(max_diff(w.select(2, 0).select(2, 0), torch::sigmoid(s00)) < 1e-12);
}

CATCH_TEST_CASE("a sink logit at -inf is softmax, on both paths") {
  const Inputs in = draw(2);
  torch::Tensor ws, w;
  const auto want = test::build({"softmax", {}}, H, D, C)->forward(in.q, in.k, in.v, in.x, &ws);
  for (const std::string backend : {"eager", "auto"}) {
    CATCH_CAPTURE(backend);
    auto m = test::build({"sink_logit", {}}, H, D, C, backend);
    set(*m, "sink_logit", -INFINITY);
    CATCH_CHECK(max_diff(m->forward(in.q, in.k, in.v, in.x), want) < 1e-12);
    m->forward(in.q, in.k, in.v, in.x, &w);
    CATCH_CHECK(max_diff(w, ws) < 1e-12);
    set(*m, "sink_logit", 2.0);  // a finite sink takes mass from every row
    CATCH_CHECK(max_diff(m->forward(in.q, in.k, in.v, in.x), want) > 1e-3);
  }
}

CATCH_TEST_CASE("a forget gate that keeps everything (f = 1) is softmax, on both paths") {
  const Inputs in = draw(3);
  const auto want = test::build({"softmax", {{"position", Value{std::string("none")}}}}, H, D, C)
                        ->forward(in.q, in.k, in.v, in.x);
  for (const std::string backend : {"eager", "auto"}) {
    CATCH_CAPTURE(backend);
    auto m = test::build({"forgetting", {}}, H, D, C, backend);
    set(*m, "forget_proj.weight", 0.0);
    set(*m, "forget_proj.bias", 100.0);  // log sigmoid(100) = -e^-100: 0 in float64
    CATCH_CHECK(max_diff(m->forward(in.q, in.k, in.v, in.x), want) < 1e-12);
    set(*m, "forget_proj.bias", -1.0);  // f < 1 decays distant keys
    CATCH_CHECK(max_diff(m->forward(in.q, in.k, in.v, in.x), want) > 1e-3);
  }
}

CATCH_TEST_CASE("an output gate with W_g = 0 halves the output, headwise and elementwise") {
  const Inputs in = draw(4);
  const auto want = test::build({"softmax", {}}, H, D, C)->forward(in.q, in.k, in.v, in.x);
  for (const std::string gate : {"headwise", "elementwise"}) {
    for (const std::string backend : {"eager", "auto"}) {
      CATCH_CAPTURE(gate, backend);
      auto m = test::build({"gated", {{"output_gate", Value{gate}}}}, H, D, C, backend);
      set(*m, "gate_proj.weight", 0.0);
      CATCH_CHECK(max_diff(m->forward(in.q, in.k, in.v, in.x), 0.5 * want) < 1e-12);
    }
  }
}

CATCH_TEST_CASE("SSMax: row 0 keeps weight 1, and a larger scale sharpens every longer row") {
  const Inputs in = draw(5);
  auto m = test::build({"ssmax", {}}, H, D, C);
  auto max_weight = [&](double c) {
    set(*m, "ssmax_scale", c);
    torch::Tensor w;
    m->forward(in.q, in.k, in.v, in.x, &w);
    CATCH_CHECK(max_diff(w.select(2, 0).select(2, 0), torch::ones({B, H}, f64)) < 1e-12);
    return std::get<0>(w.max(-1)).narrow(2, 1, T - 1);  // [B, H, T - 1]
  };
  CATCH_CHECK((max_weight(2.0) > max_weight(0.5)).all().item<bool>());
}

}  // namespace sink_cures_test
