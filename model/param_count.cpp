#include "model/param_count.h"

#include "variants/registry.h"

namespace attnbench::model {

int64_t variant_parameters_per_layer(const config::ModelConfig& model,
                                     const config::AttentionConfig& attention) {
  return variants::variant_parameter_count(variants::variant_context(model, attention));
}

int64_t closed_form_parameter_count(const config::ModelConfig& model,
                                    const config::AttentionConfig& attention) {
  const int64_t v = model.padded_vocab(), c = model.d_model, f = model.d_ffn;
  const int64_t kv = model.kv_dim();  // C, or less with grouped-query attention
  const int64_t per_layer =
      2 * c * c + 2 * c * kv + 3 * c * f + 2 * c + variant_parameters_per_layer(model, attention);
  return v * c + model.n_layer * per_layer + c + (model.tie_embeddings ? 0 : v * c);
}

}  // namespace attnbench::model
