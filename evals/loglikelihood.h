// Runs token requests through a LanguageModel the way lm-eval's HFLM._loglikelihood_tokens does:
// planned batches (request_plan.h), right padding, logits sliced to the continuation,
// log_softmax, summed log-prob and the greedy flag.
#pragma once
#include <cstdint>
#include <vector>

#include "evals/language_model.h"
#include "evals/request_plan.h"

namespace attnbench::evals {

class ProgressBar;

struct Loglikelihood {
  double logprob = 0;      // sum over continuation tokens of log p(token | prefix)
  bool is_greedy = false;  // every continuation token is the argmax (first maximum) of its row
};

struct ForwardStats {
  int64_t forward_calls = 0;
  int64_t rows = 0;            // model rows run (one per shared-input group)
  double forward_seconds = 0;  // time inside LanguageModel::logits
};

// log_softmax is taken as lm-eval takes it, in the logits' dtype (float32), over the continuation
// rows only (contlen x V per request); the per-token log-probs are summed in float64.
std::vector<Loglikelihood> compute_loglikelihoods(LanguageModel& model,
                                                  const std::vector<TokenRequest>& requests,
                                                  int64_t batch_size,
                                                  ProgressBar* progress = nullptr,
                                                  ForwardStats* stats = nullptr);

}  // namespace attnbench::evals
