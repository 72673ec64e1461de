// lm-eval's rolling windows for LoglikelihoodRolling (WikiText): lm_eval/utils.py
// get_rolling_token_windows + make_disjoint_window, used by HFLM.loglikelihood_rolling with
// max_seq_len = the model's context length and context_len = 1.
#pragma once
#include <cstdint>
#include <vector>

namespace attnbench::evals {

struct TokenWindow {
  std::vector<int64_t> input;      // tokens fed to the model (context of the prediction)
  std::vector<int64_t> predicted;  // tokens scored; the last len(predicted) logits are used
};

// Windows of at most max_seq_len tokens that together predict every token of `tokens` exactly once.
// The first window is [prefix] + tokens[:L-1] predicting tokens[:L] (L = min(max_seq_len, n));
// each later window predicts up to max_seq_len - context_len + 1 new tokens with the max_seq_len
// tokens before its end as input. Requires 1 <= context_len <= max_seq_len (std::invalid_argument).
std::vector<TokenWindow> rolling_token_windows(const std::vector<int64_t>& tokens,
                                               int64_t prefix_token, int64_t max_seq_len,
                                               int64_t context_len);

// Drops from the input the tokens that are also predicted, except the first:
// input[: len(input) - len(predicted) + 1]. The pair then forms a (context, continuation) request
// whose concatenation minus its last token is the original input.
TokenWindow make_disjoint_window(const TokenWindow& window);

}  // namespace attnbench::evals
