#include "evals/rolling_windows.h"

#include <algorithm>
#include <stdexcept>

namespace attnbench::evals {

std::vector<TokenWindow> rolling_token_windows(const std::vector<int64_t>& tokens,
                                               int64_t prefix_token, int64_t max_seq_len,
                                               int64_t context_len) {
  if (context_len < 1 || context_len > max_seq_len) {
    throw std::invalid_argument("rolling windows need 1 <= context_len <= max_seq_len");
  }
  std::vector<TokenWindow> windows;
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n == 0) return windows;
  auto slice = [&](int64_t begin, int64_t end) {
    return std::vector<int64_t>(tokens.begin() + begin, tokens.begin() + end);
  };
  const int64_t pred_len = max_seq_len - context_len + 1;

  // First window: predict every token it holds, conditioned on the prefix token.
  const int64_t first = std::min(max_seq_len, n);
  TokenWindow w;
  w.input.push_back(prefix_token);
  std::vector<int64_t> head = slice(0, first - 1);
  w.input.insert(w.input.end(), head.begin(), head.end());
  w.predicted = slice(0, first);
  windows.push_back(std::move(w));
  int64_t predicted = first;

  while (predicted < n) {
    const int64_t window_pred_len = std::min(n - predicted, pred_len);
    const int64_t window_end = predicted + window_pred_len;
    // window_end - max_seq_len - 1 >= 0 here: predicted >= max_seq_len after the first window.
    windows.push_back({slice(window_end - max_seq_len - 1, window_end - 1),
                       slice(window_end - window_pred_len, window_end)});
    predicted += window_pred_len;
  }
  return windows;
}

TokenWindow make_disjoint_window(const TokenWindow& window) {
  const size_t keep = window.input.size() - window.predicted.size() + 1;
  return {std::vector<int64_t>(window.input.begin(), window.input.begin() + keep), window.predicted};
}

}  // namespace attnbench::evals
