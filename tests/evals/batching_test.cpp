// Batching invariance (docs/evaluation.md: results do not depend on --batch-size): the same
// randomly initialised, seeded model gives the same per-item log-likelihoods to 1e-5 at batch
// sizes 1, 7 and 32.
#include <torch/torch.h>

#include <cmath>
#include <random>

#include <catch2/catch.hpp>

#include "core/config/run_config.h"
#include "evals/decoder_lm_adapter.h"
#include "evals/loglikelihood.h"
#include "model/decoder.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace batching_test {

using namespace attnbench;
using namespace attnbench::evals;

namespace {

config::RunConfig tiny_config(const std::string& variant) {
  return config::parse_run_config("[model]\npreset = \"tiny\"\ncontext_length = 48\n"
                                  "[attention]\nvariant = \"" + variant + "\"\n",
                                  "batching-test");
}

// Requests of varied lengths, some sharing contexts (multiple choice style), some truncated.
std::vector<TokenRequest> random_requests(int n, int64_t vocab) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int64_t> tok(0, vocab - 1);
  std::uniform_int_distribution<int> ctx_len(1, 60), cont_len(1, 6);
  std::vector<TokenRequest> out;
  while (static_cast<int>(out.size()) < n) {
    std::vector<int64_t> ctx(static_cast<size_t>(ctx_len(rng)));
    for (auto& t : ctx) t = tok(rng);
    for (int choice = 0; choice < 3; ++choice) {
      std::vector<int64_t> cont(static_cast<size_t>(cont_len(rng)));
      for (auto& t : cont) t = tok(rng);
      out.push_back({ctx, cont});
    }
  }
  return out;
}

}  // namespace

CATCH_TEST_CASE("per-item log-likelihoods do not depend on the batch size (1, 7, 32)") {
  for (const std::string variant : {"softmax", "lazy"}) {
    CATCH_SECTION(variant) {
      torch::manual_seed(0);
      config::RunConfig cfg = tiny_config(variant);
      DecoderLMAdapter model(model::DecoderLM(cfg).ptr());
      auto requests = random_requests(60, cfg.model.vocab_size);
      auto ref = compute_loglikelihoods(model, requests, 1);
      for (int64_t bs : {7, 32}) {
        auto got = compute_loglikelihoods(model, requests, bs);
        CATCH_REQUIRE(got.size() == ref.size());
        double worst = 0;
        for (size_t i = 0; i < ref.size(); ++i) {
          worst = std::max(worst, std::abs(got[i].logprob - ref[i].logprob));
          CATCH_CHECK(got[i].is_greedy == ref[i].is_greedy);
        }
        CATCH_INFO("batch size " << bs << ": largest difference " << worst);
        CATCH_CHECK(worst <= 1e-5);
      }
      // The scores are real log-probabilities of a near-uniform random model (about -log 50257 per
      // token), so a broken slice or padding would not pass by accident.
      CATCH_CHECK(ref[0].logprob < 0);
      CATCH_CHECK(ref[0].logprob / static_cast<double>(requests[0].continuation.size()) ==
                  Catch::Detail::Approx(-std::log(50257.0)).margin(1.0));
    }
  }
}

CATCH_TEST_CASE("the adapter's logits_at equals the model's full forward at those positions") {
  torch::manual_seed(5);
  for (const std::string variant : {"softmax", "lazy"}) {
    config::RunConfig cfg = tiny_config(variant);
    model::DecoderLM m(cfg);
    DecoderLMAdapter lm(m.ptr());
    torch::Tensor tokens = torch::randint(0, 50257, {3, 17}, torch::kInt64);
    torch::Tensor positions = torch::tensor({0, 16, 1, 0, 2, 9, 2, 10}, torch::kInt64).view({4, 2});
    torch::Tensor full = lm.logits(tokens);
    CATCH_REQUIRE(full.sizes() == torch::IntArrayRef({3, 17, cfg.model.padded_vocab()}));
    {
      torch::NoGradGuard no_grad;
      CATCH_CHECK(torch::equal(full, m->forward(tokens)));
    }
    torch::Tensor at = lm.logits_at(tokens, positions);
    torch::Tensor expected = torch::stack({full[0][16], full[1][0], full[2][9], full[2][10]});
    CATCH_CHECK((at - expected).abs().max().item<double>() < 1e-5);
  }
}

}  // namespace batching_test
