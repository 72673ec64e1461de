// Runs token requests through a LanguageModel the way lm-eval's HFLM._loglikelihood_tokens does:
// planned batches (request_plan.h), right padding, logits sliced to the continuation,
// log_softmax, summed log-prob and the greedy flag. Requests that share a context are computed as
// one pass over their common prefix, continued from the model's cache by one batched pass over
// the rest of their inputs (docs/evaluation.md, "Prefix reuse"): the same log-likelihoods up to
// float rounding, with each shared token computed once.
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
  int64_t rows = 0;            // model rows run (one per shared-input group, prefix or suffix)
  double forward_seconds = 0;  // time inside the model (logits_at, DecodingState::feed)
  int64_t tokens = 0;          // input positions the model computed, padding excluded
  int64_t tokens_full = 0;     // the same without prefix reuse: one full row per distinct input
};

// log_softmax is taken as lm-eval takes it, in the logits' dtype (float32), over the continuation
// rows only (contlen x V per request); the per-token log-probs are summed in float64. Prefix reuse
// needs the model's cache (LanguageModel::start_decoding) and `reuse_prefixes`; otherwise every
// request is a full row, as lm-eval runs it. With a cache, the LM head runs once over the output
// states of several model calls, full rows' included.
std::vector<Loglikelihood> compute_loglikelihoods(LanguageModel& model,
                                                  const std::vector<TokenRequest>& requests,
                                                  int64_t batch_size,
                                                  ProgressBar* progress = nullptr,
                                                  ForwardStats* stats = nullptr,
                                                  bool reuse_prefixes = true);

}  // namespace attnbench::evals
