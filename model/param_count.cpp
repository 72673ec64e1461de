#include "model/param_count.h"

#include <string>
#include <variant>

namespace attnbench::model {
namespace {

// Resolved attention parameters that do not apply are absent (attention_schema.h), so absence
// means "this part is not used".
std::string param_string(const config::AttentionConfig& a, const std::string& key) {
  auto it = a.params.find(key);
  if (it == a.params.end()) return "";
  const auto* s = std::get_if<std::string>(&it->second);
  return s ? *s : "";
}

int64_t param_int(const config::AttentionConfig& a, const std::string& key) {
  auto it = a.params.find(key);
  if (it == a.params.end()) return 0;
  const auto* i = std::get_if<int64_t>(&it->second);
  return i ? *i : 0;
}

}  // namespace

int64_t variant_parameters_per_layer(const config::ModelConfig& model,
                                     const config::AttentionConfig& attention) {
  const int64_t h = model.n_head, c = model.d_model;
  int64_t n = 0;
  if (param_string(attention, "position").find("distance_bias") != std::string::npos) {
    n += h * param_int(attention, "bias_window");
  }
  if (param_string(attention, "normalizer") == "elastic") {
    n += param_string(attention, "tau_form") == "per_token" ? (c + 1) * h : h;
  }
  return n;
}

int64_t closed_form_parameter_count(const config::ModelConfig& model,
                                    const config::AttentionConfig& attention) {
  const int64_t v = model.padded_vocab(), c = model.d_model, f = model.d_ffn;
  const int64_t per_layer =
      4 * c * c + 3 * c * f + 2 * c + variant_parameters_per_layer(model, attention);
  return v * c + model.n_layer * per_layer + c + (model.tie_embeddings ? 0 : v * c);
}

}  // namespace attnbench::model
