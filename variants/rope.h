// RoPE's frequencies, one function for every rotary model in attnbench (docs/variants.md,
// "Scores"): the variants' position part (variants/position.h) and the imported Hugging Face models
// (model/pretrained/) rotate at the angles it gives, so that a pretrained Llama 3.x continued with a
// variant (model.init_from) keeps the positions it was trained with.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attnbench::variants {

// How the base frequencies are rescaled for a longer context than the model was first trained on:
// none, linear position interpolation (positions / factor), or Llama 3.1's per-band rule.
enum class RopeScaling { None, Linear, Llama3 };

// The spellings of config.json's rope_type and of attention.rope_scaling: "none" is transformers'
// "default".
const std::vector<std::string>& rope_scaling_names();  // none, linear, llama3
RopeScaling parse_rope_scaling(const std::string& name);  // std::invalid_argument when unknown

struct RopeFrequencies {
  double theta = 10000.0;  // the base: pair d of D rotated dimensions turns at theta^(-2d/D)
  RopeScaling scaling = RopeScaling::None;
  double factor = 1.0;                                    // linear and llama3
  double low_freq_factor = 1.0, high_freq_factor = 4.0;  // llama3
  double original_context = 8192.0;                      // llama3 (a float, as transformers reads it)
};

// The inverse frequencies [dims / 2] in `dtype`, computed in that dtype as transformers computes
// them (1 / theta^(arange(0, dims, 2) / dims), then the scaling, operation by operation), so that
// in float32 an imported model rotates by transformers' angles to the last bit; the variants use
// float64. `dims` must be even and positive.
torch::Tensor rope_inverse_frequencies(const RopeFrequencies& f, int64_t dims,
                                       torch::ScalarType dtype);

}  // namespace attnbench::variants
