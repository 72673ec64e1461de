#include "evals/loglikelihood.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "evals/progress.h"

namespace attnbench::evals {

namespace {

std::string shape_string(const torch::Tensor& t) {
  std::string s = "[";
  for (int64_t d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.size(d));
  return s + "]";
}

// Scores one request from the logits of the last `span` input positions of its row [span, >= V]:
// its continuation's logits are the last contlen of them. log p(token) = logit[token] -
// logsumexp(row), taken in the logits' dtype (float32), as lm-eval's log_softmax, and summed in
// float64. Greedy (lm-eval: every continuation token is the argmax of its row of log-probs) is read
// from the logits themselves: log_softmax is monotone per row, and torch's argmax returns the first
// maximum, as lm-eval's does. (Converting the rows to float64 first cost half of a small model's
// evaluation in allocation and memory traffic: contlen x 50257 doubles per request.)
Loglikelihood score(const torch::Tensor& span_logits, int64_t contlen,
                    const std::vector<int64_t>& continuation, int64_t vocab) {
  Loglikelihood out;
  out.is_greedy = true;
  if (contlen == 0) return out;
  for (int64_t token : continuation) {
    if (token < 0 || token >= vocab) {
      throw std::runtime_error("continuation token " + std::to_string(token) +
                               " is outside the model's vocabulary of " + std::to_string(vocab));
    }
  }
  torch::Tensor rows = span_logits.narrow(0, span_logits.size(0) - contlen, contlen).narrow(1, 0, vocab);
  torch::Tensor targets = torch::tensor(continuation, torch::kInt64).unsqueeze(1);
  torch::Tensor logprobs = (rows.gather(1, targets).squeeze(1) - torch::logsumexp(rows, 1))
                               .to(torch::kFloat64);
  torch::Tensor best = rows.argmax(/*dim=*/1);
  auto lp = logprobs.accessor<double, 1>();
  auto argmax = best.accessor<int64_t, 1>();
  for (int64_t t = 0; t < contlen; ++t) {
    out.logprob += lp[t];
    if (argmax[t] != continuation[static_cast<size_t>(t)]) out.is_greedy = false;
  }
  return out;
}

}  // namespace

std::vector<Loglikelihood> compute_loglikelihoods(LanguageModel& model,
                                                  const std::vector<TokenRequest>& requests,
                                                  int64_t batch_size, ProgressBar* progress,
                                                  ForwardStats* stats) {
  torch::NoGradGuard no_grad;
  const int64_t max_length = model.max_length();
  const int64_t vocab = model.vocab_size();
  std::vector<Loglikelihood> results(requests.size());
  std::vector<ModelInput> inputs;
  inputs.reserve(requests.size());
  for (const auto& r : requests) inputs.push_back(model_input(r, max_length));

  for (const PlannedBatch& batch : plan_batches(requests, batch_size)) {
    const auto rows = static_cast<int64_t>(batch.groups.size());
    int64_t width = 0;
    for (const auto& g : batch.groups) {
      width = std::max<int64_t>(width, static_cast<int64_t>(inputs[g.members[0]].tokens.size()));
    }
    // Right padding with token 0 (pad_and_concat pads with zeros): causal rows never see it.
    torch::Tensor tokens = torch::zeros({rows, width}, torch::kInt64);
    auto acc = tokens.accessor<int64_t, 2>();
    // Positions read per row: the last `span` of its input, span = its longest member continuation
    // (members share the input, so one span serves them all).
    std::vector<int64_t> span(static_cast<size_t>(rows), 0);
    std::vector<int64_t> flat;
    for (int64_t b = 0; b < rows; ++b) {
      const auto& group = batch.groups[static_cast<size_t>(b)];
      const auto& t = inputs[group.members[0]].tokens;
      for (size_t i = 0; i < t.size(); ++i) acc[b][static_cast<int64_t>(i)] = t[i];
      for (size_t m : group.members) span[static_cast<size_t>(b)] = std::max(span[static_cast<size_t>(b)], inputs[m].contlen);
      const auto inplen = static_cast<int64_t>(t.size());
      for (int64_t p = inplen - span[static_cast<size_t>(b)]; p < inplen; ++p) {
        flat.push_back(b);
        flat.push_back(p);
      }
    }
    const auto n_positions = static_cast<int64_t>(flat.size() / 2);
    torch::Tensor positions = torch::from_blob(flat.data(), {n_positions, 2}, torch::kInt64).clone();

    const auto t0 = std::chrono::steady_clock::now();
    torch::Tensor logits = n_positions > 0 ? model.logits_at(tokens, positions)
                                           : torch::zeros({0, vocab}, torch::kFloat32);
    logits = logits.to(torch::kCPU).contiguous();
    if (stats) {
      stats->forward_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      stats->forward_calls += 1;
      stats->rows += rows;
    }
    if (logits.dim() != 2 || logits.size(0) != n_positions || logits.size(1) < vocab) {
      throw std::runtime_error("the model returned logits of shape " + shape_string(logits) +
                               " for " + std::to_string(n_positions) + " positions; expected [" +
                               std::to_string(n_positions) + ", >= " + std::to_string(vocab) + "]");
    }
    int64_t offset = 0, done = 0;
    for (int64_t b = 0; b < rows; ++b) {
      torch::Tensor row_span = logits.narrow(0, offset, span[static_cast<size_t>(b)]);
      offset += span[static_cast<size_t>(b)];
      for (size_t m : batch.groups[static_cast<size_t>(b)].members) {
        results[m] = score(row_span, inputs[m].contlen, requests[m].continuation, vocab);
        ++done;
      }
    }
    if (progress) progress->advance(done);
  }
  return results;
}

}  // namespace attnbench::evals
