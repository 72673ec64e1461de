// A model with a non-finite parameter or output is never scored nor saved (docs/reliability.md,
// "Non-finite models"): a diverged run's last checkpoint would otherwise be evaluated into an
// accuracy (NaN logits rank candidates arbitrarily) or generate '!!!!' (token 0 wins every argmax).
#pragma once
#include <torch/torch.h>

#include <string>

#include "model/causal_lm.h"

namespace attnbench::model {

// The name of the first parameter or buffer holding a NaN or an infinity, with how many of its
// values do ("blocks.0.attn.q.weight (3 of 4096 values)"); "" when every value is finite.
std::string first_non_finite_tensor(const torch::nn::Module& m);

// Throws std::runtime_error (exit 1) naming `source` (the checkpoint or model folder) and the
// tensor when a parameter or buffer is not finite, or when a probe forward (the first 16 token ids
// as one sequence) gives a non-finite logit: finite weights can still overflow.
void require_finite_model(CausalLMImpl& m, const std::string& source);

}  // namespace attnbench::model
