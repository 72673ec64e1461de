// What a training run logs of its attention at each validation (docs/training.md, "Watching
// attention while it trains"): on one fixed validation window, the sink mass (the mean over layers
// and heads, and each layer's mean over its heads) and the variant's learned statistics that are
// one number per head (Elastic-Softmax's tau, a gate's bias, ...), each layer's mean over its
// heads and their mean over layers. Names: attn/<stat> and attn/<stat>/layer_<l> (two digits).
// A retrofit is watched by them: tau moving away from 0, the sink mass falling from the pretrained
// model's. The statistics are those of `attnbench attn-stats` (evals/diagnostics/model_diagnostics.h).
#pragma once
#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "model/causal_lm.h"

namespace attnbench::evals::diagnostics {

// `window`: the tokens of one window [T] (the model's input, not its targets). Leaves the model in
// evaluation mode, as measure() does.
std::vector<std::pair<std::string, double>> training_probe(model::CausalLMImpl& model,
                                                           const torch::Tensor& window);

}  // namespace attnbench::evals::diagnostics
