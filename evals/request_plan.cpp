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

namespace {

// The number of leading tokens a and b share.
int64_t common_prefix(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const auto end = a.begin() + static_cast<std::ptrdiff_t>(std::min(a.size(), b.size()));
  return std::mismatch(a.begin(), end, b.begin()).first - a.begin();
}

// The prefix the members' inputs share (PrefixGroup::prefix), 0 when none.
int64_t shared_prefix(const std::vector<size_t>& members, const std::vector<ModelInput>& inputs) {
  const std::vector<int64_t>& first = inputs[members.front()].tokens;
  auto prefix = static_cast<int64_t>(first.size());
  for (size_t m : members) prefix = std::min(prefix, common_prefix(first, inputs[m].tokens));
  return prefix;
}

}  // namespace

PrefixPlan plan_prefix_groups(const std::vector<TokenRequest>& requests,
                              const std::vector<ModelInput>& inputs) {
  std::vector<std::vector<size_t>> by_context;
  std::map<std::vector<int64_t>, size_t> index;
  for (size_t i = 0; i < requests.size(); ++i) {
    auto [it, inserted] = index.emplace(requests[i].context, by_context.size());
    if (inserted) by_context.emplace_back();
    by_context[it->second].push_back(i);
  }
  PrefixPlan plan;
  for (auto& members : by_context) {
    const int64_t prefix = members.size() >= 2 ? shared_prefix(members, inputs) : 0;
    if (prefix >= 1) {
      plan.groups.push_back({std::move(members), prefix});
    } else {
      plan.rest.insert(plan.rest.end(), members.begin(), members.end());
    }
  }
  std::sort(plan.rest.begin(), plan.rest.end());
  return plan;
}

int64_t prefix_slack(int64_t longest) { return std::max<int64_t>(2, longest / 8); }

namespace {
// Indices of `keys`, largest key first, ties in index order.
std::vector<size_t> largest_first(const std::vector<int64_t>& keys) {
  std::vector<size_t> order(keys.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a] > keys[b]; });
  return order;
}
}  // namespace

std::vector<PrefixWindow> plan_prefix_windows(const std::vector<PrefixGroup>& groups,
                                              int64_t batch_size) {
  std::vector<int64_t> prefixes;
  for (const PrefixGroup& g : groups) prefixes.push_back(g.prefix);
  std::vector<PrefixWindow> windows;
  int64_t longest = 0;
  for (size_t g : largest_first(prefixes)) {
    const int64_t p = groups[g].prefix;
    if (windows.empty() || static_cast<int64_t>(windows.back().groups.size()) >= batch_size ||
        longest - p > prefix_slack(longest)) {
      windows.emplace_back();
      longest = p;
    }
    windows.back().groups.push_back(g);
    windows.back().prefix = p;  // the shortest so far: groups come longest first
  }
  return windows;
}

std::vector<std::vector<size_t>> plan_length_batches(const std::vector<int64_t>& lengths,
                                                     int64_t batch_size) {
  std::vector<std::vector<size_t>> batches;
  for (size_t r : largest_first(lengths)) {
    if (batches.empty() || static_cast<int64_t>(batches.back().size()) >= batch_size ||
        lengths[batches.back().front()] - lengths[r] > kPaddingSlack) {
      batches.emplace_back();
    }
    batches.back().push_back(r);
  }
  return batches;
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
