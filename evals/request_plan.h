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

// Requests that share a context, scored from one pass over their common prefix continued by one
// batched pass over the rest of their inputs (docs/evaluation.md, "Prefix reuse").
struct PrefixGroup {
  std::vector<size_t> members;  // indices into the request list, ascending
  // The members' model inputs agree on their first `prefix` tokens (the context, and the first
  // tokens of the continuations when those agree too): the logits there are the same for all of
  // them and computed once.
  int64_t prefix = 0;
};

struct PrefixPlan {
  std::vector<PrefixGroup> groups;
  std::vector<size_t> rest;  // requests scored as full rows (plan_batches), ascending
};

// Groups the requests with equal context tokens, two or more of them with a common prefix of at
// least one token (after left truncation), in order of first appearance; every other request goes
// to `rest`. `inputs` are model_input of each request.
PrefixPlan plan_prefix_groups(const std::vector<TokenRequest>& requests,
                              const std::vector<ModelInput>& inputs);

// Prefix groups computed together, to keep the model calls few: `groups` (indices into the plan's
// groups) run their first `prefix` input tokens as one batch, then their remaining inputs as
// continued batches. Groups are taken longest prefix first; a window holds at most `batch_size`
// groups whose prefixes differ by at most prefix_slack(longest) tokens, and shares the shortest
// of them (the tokens between are recomputed per continued row: the slack bounds that cost).
struct PrefixWindow {
  std::vector<size_t> groups;
  int64_t prefix = 0;
};
std::vector<PrefixWindow> plan_prefix_windows(const std::vector<PrefixGroup>& groups,
                                              int64_t batch_size);
// How much shorter than the window's longest prefix a group's may be: 1/8 of it, at least 2.
int64_t prefix_slack(int64_t longest);

// Rows of lengths `lengths` cut into batches: longest first, a batch ends at `batch_size` rows or
// before a row more than kPaddingSlack tokens shorter than its first (its padding). Returns the
// batches as indices into `lengths`.
constexpr int64_t kPaddingSlack = 16;
std::vector<std::vector<size_t>> plan_length_batches(const std::vector<int64_t>& lengths,
                                                     int64_t batch_size);

// Groups requests by ctx + cont[:-1] (when `share_contexts`), sorts the groups by their
// representative's (-len(ctx + cont), tokens) — longest first, ties by token sequence — and cuts
// the sorted list into batches of `batch_size` rows. Independent of batch_size apart from the cut,
// so per-request results cannot depend on it through the schedule.
std::vector<PlannedBatch> plan_batches(const std::vector<TokenRequest>& requests,
                                       int64_t batch_size, bool share_contexts = true);

}  // namespace attnbench::evals
