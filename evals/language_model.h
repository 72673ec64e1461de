// What the evaluation needs from a model: next-token logits for a batch of token rows, and
// optionally incremental decoding over a cache (a context computed once, then continued).
// Implemented over model::DecoderLM (decoder_lm_adapter.h) and by stub models with known
// log-probabilities in tests.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "evals/token_scores.h"

namespace attnbench::evals {

// The model's state after the tokens fed so far (its keys and values), for incremental decoding
// (docs/evaluation.md, "Prefix reuse").
class DecodingState {
 public:
  virtual ~DecodingState() = default;
  // Tokens fed so far per row.
  virtual int64_t length() const = 0;
  // Feeds tokens [B, S] int64 at positions length()..length()+S-1 of each row (B: the state's
  // rows; any B while nothing is fed) and returns the model's output states at `positions` [N, 2]
  // int64 rows (b, s) of the new tokens, one row each, for logits(). Rows may be right-padded
  // (causal rows never see the padding), but the state keeps the padding: feed a padded batch last.
  virtual torch::Tensor feed_states(const torch::Tensor& tokens, const torch::Tensor& positions) = 0;
  // The logits [N, >= V] float of output states [N, ...] from feed_states of any state of the same
  // model: logits[n] predicts the token after that position. Apart from feed_states so that one
  // call serves many feeds (the vocabulary projection costs most per call, not per row, for a few
  // rows). Default: the states are the logits.
  virtual torch::Tensor logits(const torch::Tensor& states) { return states; }
  // The scores of (row, target) pairs of the logits of `states` (token_scores.h): what scoring
  // reads. Default: from logits(states); a model may compute them without materialising the
  // logits (its head in vocabulary chunks).
  virtual TokenScores score_tokens(const torch::Tensor& states, const torch::Tensor& rows,
                                   const torch::Tensor& targets, int64_t vocab) {
    return token_scores(logits(states), rows, targets, vocab);
  }
  // logits(feed_states(tokens, positions)).
  torch::Tensor feed(const torch::Tensor& tokens, const torch::Tensor& positions) {
    return logits(feed_states(tokens, positions));
  }
  // A new state whose row i continues this state's row rows[i] (this state is left as it is):
  // e.g. one context shared by several continuations.
  virtual std::unique_ptr<DecodingState> select(const std::vector<int64_t>& rows) const = 0;
};

class LanguageModel {
 public:
  virtual ~LanguageModel() = default;
  // The longest input the model accepts (lm-eval's max_length): inputs are left-truncated to it.
  virtual int64_t max_length() const = 0;
  // The context the model was trained at. Scoring at a longer max_length is length extrapolation;
  // its results are named task@max_length (scored_task_name).
  virtual int64_t trained_length() const { return max_length(); }
  // The real vocabulary size. Logits may have more columns (a padded embedding); log_softmax is
  // taken over the first vocab_size() of them, so padding never takes probability mass.
  virtual int64_t vocab_size() const = 0;
  // tokens [B, T] int64 (right-padded; rows never look at later positions) -> logits [B, T, >= V]
  // float, logits[b, t] predicting token t + 1.
  virtual torch::Tensor logits(const torch::Tensor& tokens) = 0;
  // Logits at selected positions only: `positions` [N, 2] int64 rows (b, t) -> [N, >= V]. Scoring
  // reads a few continuation positions per row, so a model may skip the vocabulary projection
  // everywhere else (it is most of a small model's FLOPs). Default: slice logits().
  virtual torch::Tensor logits_at(const torch::Tensor& tokens, const torch::Tensor& positions) {
    torch::Tensor all = logits(tokens);
    return all.index({positions.select(1, 0), positions.select(1, 1)});
  }
  // A fresh state for incremental decoding over the model's cache; nullptr when the model has no
  // cache (callers then recompute every row in full: RecomputeDecoding, decoding.h).
  virtual std::unique_ptr<DecodingState> start_decoding() { return nullptr; }
};

}  // namespace attnbench::evals
