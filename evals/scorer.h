// One scorer per lm-eval output type (OutputType, evals/tasks/task.h). Each turns the
// log-likelihoods of a task's requests into lm-eval's per-document results (the task's
// process_results) and reduces them into the task's metrics (each metric's aggregation), in the
// order the task lists them. The evaluator (evaluator.cpp) builds the requests, runs the model and
// dispatches to the scorer of the task's type.
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "evals/encode_pair.h"
#include "evals/evaluator.h"
#include "evals/loglikelihood.h"
#include "evals/metrics.h"
#include "evals/request_plan.h"
#include "evals/tasks/task.h"

namespace attnbench::evals {

// A scored task: doc_lls[d] holds the log-likelihoods of docs[d]'s requests (its choices, its
// target, or its rolling windows) in request order.
struct ScoringInput {
  const std::string& task;
  const std::vector<Doc>& docs;
  const std::vector<std::vector<Loglikelihood>>& doc_lls;
  const std::vector<std::string>& metrics;
  int64_t bootstrap_iters = kDefaultBootstrapIters;
};

// multiple_choice: acc = argmax(lls) == gold, acc_norm = argmax(lls / len(choice)) == gold, each
// aggregated by mean with stderr sample_stddev / sqrt(n); the gold signals of the gold choice's
// request. scorer_multiple_choice.cpp.
std::vector<MetricValue> score_multiple_choice_task(const ScoringInput& in);

// loglikelihood (LAMBADA): acc = mean(is_greedy) with the mean's stderr, perplexity =
// exp(-mean(logprob)) with a bootstrapped stderr; the gold signals of the target.
// scorer_loglikelihood.cpp.
std::vector<MetricValue> score_loglikelihood_task(const ScoringInput& in);

// loglikelihood_rolling (WikiText): word_perplexity = exp(-sum ll / sum words), byte_perplexity =
// exp(-sum ll / sum bytes), bits_per_byte = -sum ll / sum bytes / ln 2; no stderr (lm-eval has
// none for weighted aggregations). scorer_rolling.cpp.
std::vector<MetricValue> score_rolling_task(const ScoringInput& in);

// The requests of loglikelihood_rolling for one document: HFLM.loglikelihood_rolling's windows
// over encode(text), prefix = lm-eval's prefix_token_id, context_len = 1, made disjoint.
// scorer_rolling.cpp.
std::vector<TokenRequest> rolling_requests(const std::string& text, const TextEncoder& encode,
                                           int64_t max_length, int64_t prefix_token);

// The gold continuation's signals, which still move while accuracy sits at chance
// (docs/evaluation.md, "Gold log-likelihood and bits per byte"). Every multiple_choice and
// loglikelihood task reports them after its lm-eval metrics.
constexpr const char* kGoldLogprob = "logprob";            // mean over documents of ll(gold), nats
constexpr const char* kGoldBitsPerByte = "bits_per_byte";  // -sum ll(gold) / sum bytes(gold) / ln 2

// The metrics scored for a task of `type`: its lm-eval metrics, then the gold signals it lacks
// (multiple_choice and loglikelihood only; a rolling task's bits_per_byte is its own).
std::vector<std::string> reported_metrics(OutputType type,
                                          const std::vector<std::string>& task_metrics);

// The gold request of a document as (its log-likelihood, the UTF-8 bytes of its continuation
// string): Request::continuation, target delimiter included, the string lm-eval's byte_len counts.
WeightedLoglikelihood gold_continuation(const Doc& doc, size_t request, const Loglikelihood& ll);

// kGoldLogprob (mean, stderr mean_stderr) or kGoldBitsPerByte (bits_per_byte, stderr
// bits_per_byte_stderr) over the documents' gold continuations; nullopt for any other metric.
std::optional<MetricValue> gold_metric(const std::string& name,
                                       const std::vector<WeightedLoglikelihood>& gold);

// Shared by the scorers: lm-eval reports no stderr where it is NaN (fewer than two items, or
// bootstrap_iters = 0).
std::optional<double> stderr_or_none(double v);
// "task T: document N <what>".
std::runtime_error document_error(const std::string& task, const Doc& doc, const std::string& what);
// A metric the task lists but its output type does not define (a task registration bug).
[[noreturn]] void throw_undefined_metric(const std::string& task, const std::string& metric);

}  // namespace attnbench::evals
