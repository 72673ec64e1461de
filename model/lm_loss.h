// The training loss of the LM head without its logits (docs/training.md, "The loss"): mean
// next-token cross-entropy of hidden states h [N, C] under a bias-free head weight W [V, C]
// (logits = h W^T over all V columns, the padded vocabulary included, as cross_entropy over the
// model's logits), computed `chunk` tokens at a time. Per chunk the logits, their log-sum-exp, the
// loss and, when gradients are wanted, the gradients of that chunk's hidden states and its
// contribution to the weight's gradient; so [N, V] logits and their gradient never exist at once
// (the technique of Liger Kernel's fused linear cross-entropy and Apple's Cut Cross-Entropy). The
// gradients are computed in the forward pass and scaled by the upstream gradient in the backward,
// so the head's products run once each (no recomputation). Runs on any device; under CUDA bf16
// autocast the products are bf16 and the softmax float32, as for the model's logits.
#pragma once
#include <torch/torch.h>

#include <cstdint>

namespace attnbench::model {

// Tokens per chunk: 1024 x 50,304 float32 logits are 206 MB. The head's products lose efficiency
// below about 1024 rows on the CPU (at 256, 10 % slower for the tiny preset's head).
constexpr int64_t kLossChunkTokens = 1024;

// h [N, C], weight [V, C], targets [N] int64 in [0, V) -> the mean loss, a scalar float32 tensor
// with gradients for h and weight.
torch::Tensor chunked_cross_entropy(const torch::Tensor& h, const torch::Tensor& weight,
                                    const torch::Tensor& targets,
                                    int64_t chunk = kLossChunkTokens);

}  // namespace attnbench::model
