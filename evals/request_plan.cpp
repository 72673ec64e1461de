#include "evals/request_plan.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

namespace attnbench::evals {

ModelInput model_input(const TokenRequest& request, int64_t max_length) {
  const int64_t contlen = static_cast<int64_t>(request.continuation.size());
  if (contlen > max_length) {
    throw std::invalid_argument("a continuation of " + std::to_string(contlen) +
                                " tokens does not fit the model's context of " +
                                std::to_string(max_length) + " tokens");
  }
  std::vector<int64_t> whole = request.context;
  whole.insert(whole.end(), request.continuation.begin(), request.continuation.end());
  const size_t keep = std::min(whole.size(), static_cast<size_t>(max_length + 1));
  ModelInput out;
  out.tokens.assign(whole.end() - static_cast<std::ptrdiff_t>(keep), whole.end() - 1);
  out.contlen = contlen;
  return out;
}

std::vector<PlannedBatch> plan_batches(const std::vector<TokenRequest>& requests,
                                       int64_t batch_size, bool share_contexts) {
  if (batch_size < 1) throw std::invalid_argument("batch size must be at least 1");
  auto full = [&](size_t i) {
    std::vector<int64_t> t = requests[i].context;
    t.insert(t.end(), requests[i].continuation.begin(), requests[i].continuation.end());
    return t;
  };

  // Groups in order of first appearance (Python's dict order in Collator.group).
  std::vector<RequestGroup> groups;
  std::map<std::vector<int64_t>, size_t> by_key;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (!share_contexts) {
      groups.push_back({{i}});
      continue;
    }
    std::vector<int64_t> key = full(i);
    if (!requests[i].continuation.empty()) key.pop_back();
    auto [it, inserted] = by_key.emplace(std::move(key), groups.size());
    if (inserted) groups.push_back({});
    groups[it->second].members.push_back(i);
  }

  // Sort key of a group: its representative's (-len(ctx + cont), tuple(ctx + cont)); stable.
  std::vector<std::vector<int64_t>> keys(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) keys[g] = full(groups[g].members.front());
  std::vector<size_t> order(groups.size());
  for (size_t g = 0; g < order.size(); ++g) order[g] = g;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (keys[a].size() != keys[b].size()) return keys[a].size() > keys[b].size();
    return keys[a] < keys[b];
  });

  std::vector<PlannedBatch> batches;
  for (size_t k = 0; k < order.size(); ++k) {
    if (k % static_cast<size_t>(batch_size) == 0) batches.emplace_back();
    batches.back().groups.push_back(std::move(groups[order[k]]));
  }
  return batches;
}

}  // namespace attnbench::evals
