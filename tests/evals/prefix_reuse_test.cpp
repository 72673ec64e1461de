// Prefix reuse (docs/evaluation.md, "Prefix reuse"): the plan (which requests share a prefix, how
// long, how groups and rows are batched) and the equality with lm-eval's full rows: every request's
// log-likelihood to 1e-5 and its greedy flag, for variants whose incremental step differs most
// from their full forward (absolute positions, data-dependent state, eager-only normalisers).
#include <torch/torch.h>

#include <cmath>
#include <random>

#include <catch2/catch.hpp>

#include "core/config/run_config.h"
#include "evals/decoder_lm_adapter.h"
#include "evals/loglikelihood.h"
#include "evals/request_plan.h"
#include "model/decoder.h"
#include "tests/evals/stub_model.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace prefix_reuse_test {

using namespace attnbench;
using namespace attnbench::evals;

namespace {

std::vector<ModelInput> inputs_of(const std::vector<TokenRequest>& requests, int64_t max_length) {
  std::vector<ModelInput> out;
  for (const auto& r : requests) out.push_back(model_input(r, max_length));
  return out;
}

// Multiple-choice style requests: contexts of 1..50 tokens with 1..5 continuations of 1..8 tokens,
// some continuations sharing their first tokens or equal, some single-token; a few lone requests.
std::vector<TokenRequest> choice_requests(int items, int64_t vocab, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> tok(0, vocab - 1);
  std::uniform_int_distribution<int> ctx_len(1, 50), cont_len(1, 8), choices(1, 5);
  std::vector<TokenRequest> out;
  for (int item = 0; item < items; ++item) {
    std::vector<int64_t> ctx(static_cast<size_t>(ctx_len(rng)));
    for (auto& t : ctx) t = tok(rng);
    std::vector<int64_t> shared_start = {tok(rng), tok(rng)};
    const int n = choices(rng);
    for (int c = 0; c < n; ++c) {
      std::vector<int64_t> cont(static_cast<size_t>(cont_len(rng)));
      for (auto& t : cont) t = tok(rng);
      if (c % 2 == 1 && cont.size() > 2) std::copy(shared_start.begin(), shared_start.end(), cont.begin());
      out.push_back({ctx, cont});
      if (c == 2) out.push_back({ctx, cont});  // an equal request
    }
  }
  return out;
}

}  // namespace

CATCH_TEST_CASE("prefix plan: equal contexts share their inputs' common prefix") {
  // Inputs (max_length 10): ctx [1 2 3] with conts [4 5], [4 6 7], [8]: inputs [1 2 3 4], [1 2 3 4 6],
  // [1 2 3]; common prefix 3.
  std::vector<TokenRequest> r = {{{1, 2, 3}, {4, 5}}, {{9}, {1}}, {{1, 2, 3}, {4, 6, 7}},
                                 {{1, 2, 3}, {8}}};
  PrefixPlan plan = plan_prefix_groups(r, inputs_of(r, 10));
  CATCH_REQUIRE(plan.groups.size() == 1);
  CATCH_CHECK(plan.groups[0].members == std::vector<size_t>{0, 2, 3});
  CATCH_CHECK(plan.groups[0].prefix == 3);
  CATCH_CHECK(plan.rest == std::vector<size_t>{1});
  // Continuations that agree on their first tokens extend the prefix into them.
  r = {{{1, 2}, {4, 5, 6}}, {{1, 2}, {4, 5, 7, 8}}};
  plan = plan_prefix_groups(r, inputs_of(r, 10));
  CATCH_REQUIRE(plan.groups.size() == 1);
  CATCH_CHECK(plan.groups[0].prefix == 4);  // [1 2 4 5] and [1 2 4 5 7]
  // Left truncation (max_length 4) shifts the inputs apart: nothing shared, all full rows.
  r = {{{1, 2, 3, 4, 5}, {6}}, {{1, 2, 3, 4, 5}, {7, 8, 9}}};
  plan = plan_prefix_groups(r, inputs_of(r, 4));
  CATCH_CHECK(plan.groups.empty());
  CATCH_CHECK(plan.rest == std::vector<size_t>{0, 1});
}

CATCH_TEST_CASE("prefix windows: longest first, within the slack, at most batch_size groups") {
  std::vector<PrefixGroup> groups = {{{0}, 10}, {{1}, 40}, {{2}, 36}, {{3}, 34}, {{4}, 9}, {{5}, 8}};
  auto windows = plan_prefix_windows(groups, 2);
  // 40 (slack 5): 36 joins, then the window is full; 34 opens one; 10, 9 (slack 2); 8.
  CATCH_REQUIRE(windows.size() == 4);
  CATCH_CHECK(windows[0].groups == std::vector<size_t>{1, 2});
  CATCH_CHECK(windows[0].prefix == 36);
  CATCH_CHECK(windows[1].groups == std::vector<size_t>{3});
  CATCH_CHECK(windows[2].groups == std::vector<size_t>{0, 4});
  CATCH_CHECK(windows[2].prefix == 9);
  CATCH_CHECK(windows[3].groups == std::vector<size_t>{5});
  CATCH_CHECK(prefix_slack(40) == 5);
  CATCH_CHECK(prefix_slack(3) == 2);
  // Lengths: longest first, a batch ends at batch_size rows or past kPaddingSlack of padding.
  auto batches = plan_length_batches({5, 40, 30, 24, 23, 22}, 3);
  CATCH_REQUIRE(batches.size() == 3);
  CATCH_CHECK(batches[0] == std::vector<size_t>{1, 2, 3});
  CATCH_CHECK(batches[1] == std::vector<size_t>{4, 5});
  CATCH_CHECK(batches[2] == std::vector<size_t>{0});
}

CATCH_TEST_CASE("prefix reuse gives lm-eval's full-row log-likelihoods, every request, to 1e-5") {
  for (const std::string variant : {"softmax", "lazy", "forgetting", "stick_breaking", "ssmax"}) {
    CATCH_CAPTURE(variant);
    torch::manual_seed(5);
    config::RunConfig cfg = config::parse_run_config(
        "[model]\npreset = \"tiny\"\ncontext_length = 40\n[attention]\nvariant = \"" + variant +
            "\"\n",
        "prefix-reuse-test");
    DecoderLMAdapter model(model::DecoderLM(cfg).ptr());
    const auto requests = choice_requests(40, cfg.model.vocab_size, 11);
    ForwardStats full_stats, reuse_stats;
    const auto full = compute_loglikelihoods(model, requests, 8, nullptr, &full_stats, false);
    const auto reuse = compute_loglikelihoods(model, requests, 8, nullptr, &reuse_stats, true);
    CATCH_REQUIRE(full.size() == reuse.size());
    double worst = 0;
    int greedy_differs = 0;
    for (size_t i = 0; i < full.size(); ++i) {
      worst = std::max(worst, std::abs(full[i].logprob - reuse[i].logprob));
      greedy_differs += full[i].is_greedy != reuse[i].is_greedy;
    }
    CATCH_CHECK(worst <= 1e-5);
    CATCH_CHECK(greedy_differs == 0);
    CATCH_CHECK(full_stats.tokens == full_stats.tokens_full);
    CATCH_CHECK(reuse_stats.tokens_full == full_stats.tokens_full);
    CATCH_CHECK(reuse_stats.tokens < full_stats.tokens * 3 / 4);  // the shared contexts were shared
  }
}

CATCH_TEST_CASE("a model without a cache is scored in full rows whatever the option") {
  evals::testing::BigramStub stub(5, 16, [](int64_t, int64_t) { return 0.2; });
  const auto requests = choice_requests(6, 5, 3);
  ForwardStats stats;
  const auto got = compute_loglikelihoods(stub, requests, 4, nullptr, &stats, true);
  CATCH_CHECK(stats.tokens == stats.tokens_full);
  for (size_t i = 0; i < got.size(); ++i) {
    const auto contlen = static_cast<double>(requests[i].continuation.size());
    CATCH_CHECK(std::abs(got[i].logprob - contlen * std::log(0.2)) < 1e-5);
  }
}

namespace {
// The adapter without its decoding state: every batch of full rows gets its logits from
// logits_at, as for a model that has no cache.
class WithoutCache : public LanguageModel {
 public:
  explicit WithoutCache(LanguageModel& m) : m_(m) {}
  int64_t max_length() const override { return m_.max_length(); }
  int64_t vocab_size() const override { return m_.vocab_size(); }
  torch::Tensor logits(const torch::Tensor& tokens) override { return m_.logits(tokens); }
  torch::Tensor logits_at(const torch::Tensor& tokens, const torch::Tensor& positions) override {
    return m_.logits_at(tokens, positions);
  }

 private:
  LanguageModel& m_;
};
}  // namespace

CATCH_TEST_CASE("full rows share one head projection across batches: the same log-likelihoods") {
  // Lone requests (LAMBADA, WikiText windows): the batches' output states wait for one projection
  // of 512 or more rows instead of one per batch.
  torch::manual_seed(3);
  config::RunConfig cfg = config::parse_run_config(
      "[model]\npreset = \"tiny\"\ncontext_length = 48\n", "full-rows-test");
  DecoderLMAdapter model(model::DecoderLM(cfg).ptr());
  std::mt19937 rng(4);
  std::uniform_int_distribution<int64_t> tok(0, cfg.model.vocab_size - 1);
  std::uniform_int_distribution<int> len(1, 60), cont(1, 8);
  std::vector<TokenRequest> requests;  // contexts of up to 60 tokens: some are truncated
  for (int i = 0; i < 90; ++i) {
    TokenRequest r;
    r.context.resize(static_cast<size_t>(len(rng)));
    r.continuation.resize(static_cast<size_t>(cont(rng)));
    for (auto& t : r.context) t = tok(rng);
    for (auto& t : r.continuation) t = tok(rng);
    requests.push_back(std::move(r));
  }
  size_t positions = 0;  // read by the scoring: one per continuation token
  for (const auto& r : requests) positions += r.continuation.size();
  CATCH_REQUIRE(positions < 512);  // so that the states wait for one projection at the end
  WithoutCache per_batch(model);
  ForwardStats batched_stats, per_batch_stats;
  const auto batched = compute_loglikelihoods(model, requests, 8, nullptr, &batched_stats, false);
  const auto want = compute_loglikelihoods(per_batch, requests, 8, nullptr, &per_batch_stats, false);
  CATCH_REQUIRE(batched.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    CATCH_CAPTURE(i);
    CATCH_CHECK(std::abs(batched[i].logprob - want[i].logprob) <= 1e-5);
    CATCH_CHECK(batched[i].is_greedy == want[i].is_greedy);
  }
  CATCH_CHECK(batched_stats.tokens == per_batch_stats.tokens);
  // The trunk once per batch and the head once for all of them.
  CATCH_CHECK(batched_stats.forward_calls == per_batch_stats.forward_calls + 1);
}

}  // namespace prefix_reuse_test
