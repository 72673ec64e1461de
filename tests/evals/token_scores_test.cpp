// What scoring reads from a model's head (evals/token_scores.h): the chunked CPU computation
// (head_token_scores, kernels/cpu/vocab_scores.h) against the reference on materialised logits
// (token_scores): log-probabilities to float32 rounding, the same greedy flags, ties resolved to
// the first maximum across and within blocks, padding columns ignored, NaN never turned into a
// number. Fixed seeds.
#include <torch/torch.h>

#include <cmath>

#include <catch2/catch.hpp>

#include "evals/token_scores.h"
#include "kernels/cpu/vocab_scores.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace token_scores_test {

using namespace attnbench::evals;

namespace {

// R states of width C, a head of V real rows plus 7 padding rows whose logits would dominate.
struct Head {
  torch::Tensor states, weight;
  Head(int64_t R, int64_t C, int64_t V, uint64_t seed) {
    torch::manual_seed(seed);
    states = torch::randn({R, C});
    weight = torch::cat({torch::randn({V, C}) * 0.3, torch::full({7, C}, 50.0)});
  }
};

double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

}  // namespace

CATCH_TEST_CASE("head_token_scores equals token_scores of the materialised logits") {
  // V spans several column blocks and ends inside one; rows and pairs in any order, repeated.
  const int64_t R = 300, C = 48, V = 2 * attnbench::kernels::cpu::kVocabColumns + 1234;
  const Head head(R, C, V, 7);
  const torch::Tensor rows = torch::randint(0, R, {900}, torch::kInt64);
  const torch::Tensor targets = torch::randint(0, V, {900}, torch::kInt64);
  const TokenScores want =
      token_scores(torch::mm(head.states, head.weight.t()), rows, targets, V);
  const TokenScores got = head_token_scores(head.states, head.weight, rows, targets, V);
  CATCH_REQUIRE(got.logprob.sizes() == want.logprob.sizes());
  CATCH_CHECK(max_abs_diff(got.logprob, want.logprob) < 2e-5);  // float32 rounding of ~-10 nats
  CATCH_CHECK(got.greedy.equal(want.greedy));
  // Each row's own argmax as the target: greedy everywhere, log p the row's largest.
  const torch::Tensor all = torch::arange(R, torch::kInt64);
  const torch::Tensor best = torch::mm(head.states, head.weight.narrow(0, 0, V).t()).argmax(1);
  const TokenScores at_best = head_token_scores(head.states, head.weight, all, best, V);
  CATCH_CHECK(at_best.greedy.all().item<bool>());
}

CATCH_TEST_CASE("ties go to the first maximum, within a block and across blocks") {
  const int64_t C = 8, V = attnbench::kernels::cpu::kVocabColumns + 100;
  torch::Tensor states = torch::ones({2, C});
  torch::Tensor weight = torch::zeros({V, C});
  // Row logits: 0 everywhere but 1 at columns 5 and 17 (one block) and at V - 3 (the next).
  weight[5].fill_(1.0 / C), weight[17].fill_(1.0 / C), weight[V - 3].fill_(1.0 / C);
  const torch::Tensor rows = torch::tensor({0, 0, 1}, torch::kInt64);
  const torch::Tensor targets = torch::tensor({int64_t{5}, int64_t{17}, V - 3}, torch::kInt64);
  const TokenScores got = head_token_scores(states, weight, rows, targets, V);
  const TokenScores want = token_scores(torch::mm(states, weight.t()), rows, targets, V);
  CATCH_CHECK(got.greedy.equal(torch::tensor({true, false, false})));
  CATCH_CHECK(want.greedy.equal(got.greedy));
  CATCH_CHECK(max_abs_diff(got.logprob, want.logprob) < 1e-5);  // float32 sums of ~500 terms per lane
}

CATCH_TEST_CASE("a NaN state scores NaN, and pairs outside the logits are refused") {
  const int64_t V = 300;
  Head head(3, 16, V, 1);
  head.states[1][4] = std::nan("");
  const torch::Tensor rows = torch::tensor({0, 1, 2}, torch::kInt64);
  const torch::Tensor targets = torch::tensor({3, 3, 3}, torch::kInt64);
  const TokenScores got = head_token_scores(head.states, head.weight, rows, targets, V);
  CATCH_CHECK(std::isfinite(got.logprob[0].item<float>()));
  CATCH_CHECK(std::isnan(got.logprob[1].item<float>()));
  CATCH_CHECK(std::isfinite(got.logprob[2].item<float>()));
  CATCH_CHECK_THROWS_WITH(
      head_token_scores(head.states, head.weight, rows, torch::tensor({int64_t{3}, V, int64_t{3}}), V),
      Catch::Matchers::Contains("outside"));
}

}  // namespace token_scores_test
