// The chunked head + cross-entropy (model/lm_loss.h) against cross_entropy over the materialised
// logits: the same mean loss (float32: 1e-6 relative; float64: 1e-12) and the same gradients of
// the hidden states and the head weight, whatever the chunk (1 token, not dividing N, more than N),
// scaled by the upstream gradient; a tied head's gradient adds up with the embedding's; nothing is
// computed for gradients under no_grad; and the decoder's loss() is its logits' cross-entropy.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "core/config/run_config.h"
#include "model/decoder.h"
#include "model/lm_loss.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace lm_loss_test {

using namespace attnbench;

namespace {

struct Grads {
  double loss;
  torch::Tensor dh, dw;
};

// loss * scale, backward, for `loss_of` applied to leaf copies of h and w.
template <typename Loss>
Grads run(const torch::Tensor& h0, const torch::Tensor& w0, const torch::Tensor& targets,
          double scale, Loss loss_of) {
  const torch::Tensor h = h0.detach().clone().requires_grad_(true);
  const torch::Tensor w = w0.detach().clone().requires_grad_(true);
  const torch::Tensor loss = loss_of(h, w, targets);
  (loss * scale).backward();
  return {loss.item<double>(), h.grad(), w.grad()};
}

torch::Tensor reference(const torch::Tensor& h, const torch::Tensor& w, const torch::Tensor& t) {
  return torch::nn::functional::cross_entropy(torch::mm(h, w.t()), t);
}

double relative(const torch::Tensor& got, const torch::Tensor& want) {
  return (got - want).abs().max().item<double>() / want.abs().max().item<double>();
}

}  // namespace

CATCH_TEST_CASE("chunked cross-entropy equals cross_entropy of the logits, with its gradients") {
  const int64_t N = 77, C = 24, V = 1000;
  for (torch::ScalarType dtype : {torch::kFloat, torch::kDouble}) {
    torch::manual_seed(3);
    const auto o = torch::TensorOptions().dtype(dtype);
    const torch::Tensor h = torch::randn({N, C}, o), w = torch::randn({V, C}, o) * 0.5;
    const torch::Tensor targets = torch::randint(0, V, {N}, torch::kInt64);
    const Grads want = run(h, w, targets, 3.0, reference);
    const double loss_tol = dtype == torch::kDouble ? 1e-12 : 1e-6;
    const double grad_tol = dtype == torch::kDouble ? 1e-12 : 1e-5;
    for (int64_t chunk : {int64_t{1}, int64_t{10}, int64_t{32}, N, int64_t{500}}) {
      CATCH_CAPTURE(dtype, chunk);
      const Grads got = run(h, w, targets, 3.0, [chunk](auto& a, auto& b, auto& t) {
        return model::chunked_cross_entropy(a, b, t, chunk);
      });
      CATCH_CHECK(std::abs(got.loss - want.loss) / want.loss < loss_tol);
      CATCH_CHECK(relative(got.dh, want.dh) < grad_tol);
      CATCH_CHECK(relative(got.dw, want.dw) < grad_tol);
    }
  }
}

CATCH_TEST_CASE("under no_grad the chunked loss is the loss alone") {
  torch::manual_seed(4);
  const torch::Tensor h = torch::randn({40, 8}), w = torch::randn({300, 8});
  const torch::Tensor targets = torch::randint(0, 300, {40}, torch::kInt64);
  torch::NoGradGuard no_grad;
  const torch::Tensor loss = model::chunked_cross_entropy(h, w, targets, 16);
  CATCH_CHECK(!loss.requires_grad());
  CATCH_CHECK(std::abs(loss.item<double>() - reference(h, w, targets).item<double>()) < 1e-5);
}

CATCH_TEST_CASE("the decoder's loss is the cross-entropy of its logits, tied head included") {
  for (const char* tie : {"false", "true"}) {
    CATCH_CAPTURE(tie);
    torch::manual_seed(5);
    const auto cfg = config::parse_run_config(
        std::string("[model]\npreset = \"tiny\"\ncontext_length = 32\ntie_embeddings = ") + tie +
            "\n",
        "loss-test");
    model::DecoderLM a(cfg), b(cfg);
    {
      torch::NoGradGuard no_grad;
      for (size_t i = 0; i < a->parameters().size(); ++i)
        b->parameters()[i].copy_(a->parameters()[i]);
    }
    const torch::Tensor idx = torch::randint(0, cfg.model.vocab_size, {3, 32}, torch::kInt64);
    const torch::Tensor targets = torch::randint(0, cfg.model.vocab_size, {3, 32}, torch::kInt64);
    const torch::Tensor logits = a->forward(idx);
    const torch::Tensor want =
        torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}), targets.reshape({-1}));
    want.backward();
    const torch::Tensor got = b->loss(idx, targets);
    got.backward();
    CATCH_CHECK(std::abs(got.item<double>() - want.item<double>()) / want.item<double>() < 1e-6);
    for (size_t i = 0; i < a->parameters().size(); ++i) {
      CATCH_CAPTURE(i);
      CATCH_CHECK(relative(b->parameters()[i].grad(), a->parameters()[i].grad()) < 1e-5);
    }
  }
}

}  // namespace lm_loss_test
