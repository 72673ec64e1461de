// How lm-eval's HFLM._loglikelihood_tokens schedules token requests (docs/evaluation.md, "The
// protocol as implemented"): left truncation to the model's window, grouping by shared input (the
// Collator's group_by="contexts": key ctx + cont[:-1]), longest-first sorting and fixed-size
// batches.
// Pure bookkeeping, no torch: the model side is in loglikelihood.h.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace attnbench::evals {

struct TokenRequest {
  std::vector<int64_t> context;
  std::vector<int64_t> continuation;
};

// The model input of one request: inp = (ctx + cont)[-(max_length + 1):][:-1]. The continuation's
// log-probs are read from logits[inplen - contlen : inplen].
struct ModelInput {
  std::vector<int64_t> tokens;  // length inplen
  int64_t contlen = 0;
};
// Throws std::invalid_argument when the continuation alone does not fit in max_length tokens
// (lm-eval would silently score a wrong slice).
ModelInput model_input(const TokenRequest& request, int64_t max_length);

// Requests whose ctx + cont[:-1] are equal feed the model the same tokens: one forward serves all.
struct RequestGroup {
  std::vector<size_t> members;  // indices into the request list; members[0] is the representative
};

struct PlannedBatch {
  std::vector<RequestGroup> groups;  // one model row per group
};

// Groups requests by ctx + cont[:-1] (when `share_contexts`), sorts the groups by their
// representative's (-len(ctx + cont), tokens) — longest first, ties by token sequence — and cuts
// the sorted list into batches of `batch_size` rows. Independent of batch_size apart from the cut,
// so per-request results cannot depend on it through the schedule.
std::vector<PlannedBatch> plan_batches(const std::vector<TokenRequest>& requests,
                                       int64_t batch_size, bool share_contexts = true);

}  // namespace attnbench::evals
