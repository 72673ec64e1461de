// The parameter count of the decoder in closed form, from the architecture alone (no module built):
// `attnbench train --dry-run` prints it next to the constructed model's count, and tests require
// the two to be equal for every preset and variant.
#pragma once
#include <cstdint>

#include "core/config/run_config.h"

namespace attnbench::model {

// With V = padded vocab, C = d_model, F = d_ffn, H = n_head, N = n_layer, K = n_kv_head * C / H
// (C without grouped-query attention):
//   embedding V*C
//   + N * ( 2*C*C + 2*C*K  q and o, k and v (no bias)
//         + 3*C*F          SwiGLU gate, up, down
//         + 2*C            the two RMSNorm weights
//         + extras )       the variant's parameters, below
//   + C                    final RMSNorm
//   + V*C                  LM head, unless tied
// extras per layer: the variant's own parameters, counted in closed form by its registration
// (variants/registry.h), e.g. the family's in variants/family.h.
int64_t closed_form_parameter_count(const config::ModelConfig& model,
                                    const config::AttentionConfig& attention);

// The variant's extra parameters in one layer (the "extras" above).
int64_t variant_parameters_per_layer(const config::ModelConfig& model,
                                     const config::AttentionConfig& attention);

}  // namespace attnbench::model
