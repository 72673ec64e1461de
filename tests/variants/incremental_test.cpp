// Incremental decoding (docs/variants.md, "Incremental decoding"): for every registered variant
// and family option (test::registered_cases, so a new variant file is held to it without a new
// test), forward over all T positions equals forward over a prefix followed by forward_incremental
// over the rest, in steps of several and of one token; forward with fewer queries than keys gives
// the last rows of the full weights. A variant that declares it cannot take fewer queries than keys
// is decoded by full recomputation, with the same result.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "tests/variants/support.h"
#include "variants/eager.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace incremental_test {

using namespace attnbench;
using namespace attnbench::variants;

namespace {
const auto f64 = torch::kFloat64;

double max_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

struct Inputs {
  torch::Tensor q, k, v, x;  // [B, H, T, D] x3, [B, T, C]
  Inputs positions(int64_t from, int64_t n) const {
    return {q.narrow(2, from, n), k.narrow(2, from, n), v.narrow(2, from, n), x.narrow(1, from, n)};
  }
};

Inputs random_inputs(int64_t B, int64_t H, int64_t T, int64_t D, int64_t C) {
  return {torch::randn({B, H, T, D}, f64), torch::randn({B, H, T, D}, f64),
          torch::randn({B, H, T, D}, f64), torch::randn({B, T, C}, f64)};
}

// Feeds `in` to `m` as a prefix of `steps[0]` positions, then chunks of steps[1], steps[2], ...
// and returns the outputs concatenated along the positions.
torch::Tensor decode_in_steps(AttentionVariantImpl& m, const Inputs& in,
                              const std::vector<int64_t>& steps) {
  KVCache cache;
  std::vector<torch::Tensor> outs;
  int64_t at = 0;
  for (int64_t n : steps) {
    const Inputs part = in.positions(at, n);
    outs.push_back(m.forward_incremental(part.q, part.k, part.v, part.x, cache));
    at += n;
    CATCH_CHECK(cache.length() == at);
  }
  return torch::cat(outs, 2);
}

// Plain causal softmax that refuses fewer queries than keys, as a variant might.
class SquareOnlyAttentionImpl : public AttentionVariantImpl {
 public:
  torch::Tensor forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor&, torch::Tensor* weights = nullptr) override {
    if (q.size(2) != k.size(2)) throw std::logic_error("square only");
    return eager_family_attention(q, k, v, kernels::FamilySpec{}, weights);
  }
  std::string incremental_unsupported() const override { return "square only"; }
};

}  // namespace

CATCH_TEST_CASE("every variant: full forward == prefix forward + incremental forward") {
  const int64_t B = 2, H = 3, T = 11, D = 4, C = 6;
  for (const std::string backend : {"eager", "auto"}) {
    for (const auto& c : test::registered_cases()) {
      CATCH_CAPTURE(c.label(), backend);
      torch::manual_seed(29);
      auto ctx = test::context(c, H, D, C, backend);
      auto m = test::build(c, H, D, C, backend);
      test::randomize_parameters(*m, ctx.attention.params);
      CATCH_CHECK(m->incremental_unsupported().empty());
      const Inputs in = random_inputs(B, H, T, D, C);
      const torch::Tensor full = m->forward(in.q, in.k, in.v, in.x);
      for (const std::vector<int64_t>& steps :
           {std::vector<int64_t>{6, 5}, {4, 1, 1, 3, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}}) {
        CATCH_CHECK(max_diff(decode_in_steps(*m, in, steps), full) < 1e-10);
      }
    }
  }
}

CATCH_TEST_CASE("every variant: fewer queries than keys give the last rows of the weights") {
  const int64_t B = 2, H = 3, T = 9, D = 4, C = 6, Tq = 4;
  for (const auto& c : test::registered_cases()) {
    CATCH_CAPTURE(c.label());
    torch::manual_seed(31);
    auto ctx = test::context(c, H, D, C);
    auto m = test::build(c, H, D, C);
    test::randomize_parameters(*m, ctx.attention.params);
    const Inputs in = random_inputs(B, H, T, D, C);
    torch::Tensor w_full, w_last;
    const auto full = m->forward(in.q, in.k, in.v, in.x, &w_full);
    const auto last = m->forward(in.q.narrow(2, T - Tq, Tq), in.k, in.v, in.x, &w_last);
    CATCH_CHECK(max_diff(last, full.narrow(2, T - Tq, Tq)) < 1e-10);
    if (!w_full.defined()) continue;
    CATCH_REQUIRE(w_last.sizes() == torch::IntArrayRef({B, H, Tq, T}));
    CATCH_CHECK(max_diff(w_last, w_full.narrow(2, T - Tq, Tq)) < 1e-12);
    CATCH_CHECK(max_diff(m->output_from_weights(w_last, in.v, in.x), last) < 1e-12);
  }
}

CATCH_TEST_CASE("a cache selected for n continuations serves each as its own prefix would") {
  const int64_t H = 2, D = 4, C = 6, P = 5, S = 3, n = 3;
  for (const auto& c : test::registered_cases()) {
    CATCH_CAPTURE(c.label());
    torch::manual_seed(37);
    auto ctx = test::context(c, H, D, C);
    auto m = test::build(c, H, D, C);
    test::randomize_parameters(*m, ctx.attention.params);
    // n rows with one shared prefix of P positions and different continuations of S.
    Inputs in = random_inputs(n, H, P + S, D, C);
    for (auto* t : {&in.q, &in.k, &in.v}) {
      t->narrow(2, 0, P).copy_(t->narrow(0, 0, 1).narrow(2, 0, P).clone().expand({n, H, P, D}));
    }
    in.x.narrow(1, 0, P).copy_(in.x.narrow(0, 0, 1).narrow(1, 0, P).clone().expand({n, P, C}));
    KVCache cache;
    const Inputs prefix = in.positions(0, P), rest = in.positions(P, S);
    m->forward_incremental(prefix.q.narrow(0, 0, 1), prefix.k.narrow(0, 0, 1),
                           prefix.v.narrow(0, 0, 1), prefix.x.narrow(0, 0, 1), cache);
    KVCache repeated = cache.select(torch::zeros({n}, torch::kLong));
    const auto out = m->forward_incremental(rest.q, rest.k, rest.v, rest.x, repeated);
    const auto full = m->forward(in.q, in.k, in.v, in.x).narrow(2, P, S);
    CATCH_CHECK(max_diff(out, full) < 1e-10);
  }
}

CATCH_TEST_CASE("a variant that cannot take fewer queries than keys is recomputed in full") {
  const int64_t B = 2, H = 3, T = 7, D = 4, C = 6;
  torch::manual_seed(41);
  SquareOnlyAttentionImpl m;
  const Inputs in = random_inputs(B, H, T, D, C);
  const auto full = m.forward(in.q, in.k, in.v, in.x);
  CATCH_CHECK(max_diff(decode_in_steps(m, in, {3, 1, 2, 1}), full) < 1e-12);
}

}  // namespace incremental_test
