// What scoring reads from a model's logits (docs/evaluation.md, "The protocol as implemented"):
// for (row, target) pairs, log p(target) = logit[target] - logsumexp(row) over the real vocabulary,
// in float32 as lm-eval's log_softmax, and whether the target is the row's first argmax (lm-eval's
// greedy check). Computed either from materialised logits (the reference) or straight from output
// states and the LM head's weight, over the vocabulary in chunks, so that the [rows, vocabulary]
// logits never exist at once and each chunk is reduced while it is in cache.
#pragma once
#include <torch/torch.h>

#include <cstdint>

namespace attnbench::evals {

struct TokenScores {
  torch::Tensor logprob;  // [P] float32: log p(targets[p] | row rows[p])
  torch::Tensor greedy;   // [P] bool: targets[p] is the first maximum of its row's logits
};

// From logits [R, >= vocab] (columns past `vocab` are padding and never count); rows, targets [P]
// int64 on any device. The results are on the CPU.
TokenScores token_scores(const torch::Tensor& logits, const torch::Tensor& rows,
                         const torch::Tensor& targets, int64_t vocab);

// The same from output states [R, C] and a bias-free head weight [>= vocab, C] (logits = states
// weight^T). On the CPU in float32 the logits are computed and reduced a cache-sized block at a
// time (kernels/cpu/vocab_scores.h; the log-sum-exp combined across blocks in float64, the first
// argmax kept): the same values up to float rounding, the same argmax. Elsewhere: token_scores of
// the whole product.
TokenScores head_token_scores(const torch::Tensor& states, const torch::Tensor& weight,
                              const torch::Tensor& rows, const torch::Tensor& targets,
                              int64_t vocab);

}  // namespace attnbench::evals
