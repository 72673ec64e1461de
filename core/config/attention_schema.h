// The parameter schemas of attention variants. Each variant file registers its schema here (and its
// factory in variants/registry.h) from one registration object; the config layer validates
// [attention] against it without knowing any variant. This keeps config in core, below the variants
// (docs/ARCHITECTURE.md, "Design decisions").
#pragma once
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/common/error.h"
#include "core/config/run_config.h"
#include "core/config/value.h"

namespace attnbench::config {

struct ParamSpec {
  std::string name;
  ValueType type = ValueType::String;
  Value default_value;
  std::vector<std::string> allowed;  // non-empty: the only accepted values (string params)
  std::optional<double> min, max;    // numeric bounds, inclusive
  std::string doc;
  // The parameter applies only when every listed parameter has one of the listed values, e.g.
  // {{"normalizer", {"elastic"}}}. A parameter that does not apply is dropped from the resolved
  // config, so that it never changes a run's id.
  std::vector<std::pair<std::string, std::vector<std::string>>> applies_if;
  // The value that switches an optional part off (e.g. output_gate = "none"), when there is one:
  // at this value the parameter is dropped from the resolved config like one that does not apply,
  // so adding an option to a variant leaves the ids of the runs made without it unchanged. Read
  // such a parameter with param_or(params, name, neutral).
  std::optional<Value> neutral;
};

// What a variant finds wrong with a whole run config: `key` is the dotted key the error points at
// (e.g. "model.n_head"), `message` the complete sentence.
struct ConfigProblem {
  std::string key;
  std::string message;
};
// A variant's check of the resolved config, run by the config layer before any work; nullopt when
// all is well. E.g. RoPE needs an even head dimension (variants/position.h).
using VariantCheck =
    std::function<std::optional<ConfigProblem>(const ModelConfig&, const AttentionConfig&)>;

struct VariantSchema {
  std::string name;         // registered name, e.g. "lazy"
  std::string description;  // one line
  std::vector<ParamSpec> params;
  std::vector<VariantCheck> checks;
  // Which fused kernels serve the variant, for `attnbench variants` (e.g. "CPU: cpu-tiled, every
  // option"); "" when only the eager reference runs it (backend = "fused" is then refused).
  std::string kernels;
};

// Registered from the variant's registration object (variants/registry.h). A duplicate name keeps
// the first schema and is recorded in registration_errors() (core/common/registry.h).
void register_variant_schema(VariantSchema schema);
const VariantSchema* find_variant_schema(const std::string& name);  // nullptr when unknown
std::vector<std::string> variant_names();                           // sorted

// The first problem the checks of `attention.variant` find, or nullopt.
std::optional<ConfigProblem> check_variant(const ModelConfig& model, const AttentionConfig& attention);

// The one typed reader of resolved attention parameters (variants, parameter counts, exports,
// AttentionConfig::get_*). A parameter that does not apply is absent from the resolved map, so
// absence is a state, not an error: has_param() asks, param() insists (std::logic_error, naming
// the key: the config layer validated types, so a miss is a programming error). Ints widen to
// double; any other type mismatch is a std::logic_error as well.
inline bool has_param(const ParamMap& params, const std::string& key) {
  return params.count(key) > 0;
}
template <typename T>
T param(const ParamMap& params, const std::string& key) {
  auto it = params.find(key);
  if (it == params.end()) {
    throw std::logic_error("attention parameter '" + key + "' is not in the resolved config "
                           "(it does not apply to this variant, or its schema lacks it)");
  }
  if (const T* v = std::get_if<T>(&it->second)) return *v;
  if constexpr (std::is_same_v<T, double>) {
    if (const auto* i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
  }
  throw std::logic_error("attention." + key + " has type " + type_name(type_of(it->second)) +
                         ", not the type its reader expects");
}
// `param` when present, else `fallback`.
template <typename T>
T param_or(const ParamMap& params, const std::string& key, T fallback) {
  return has_param(params, key) ? param<T>(params, key) : fallback;
}

// True when `spec` applies given the other resolved parameters.
bool param_applies(const ParamSpec& spec, const ParamMap& params);

}  // namespace attnbench::config

namespace attnbench::config {

// The resolved parameters of `variant`: its schema's defaults overlaid with `overrides`, each value
// checked (type, allowed values, bounds; ints accepted for floats), parameters that do not apply
// dropped. `where(key)` names the source of an override for error messages. Throws InputError.
ParamMap resolve_params(const std::string& variant, const ParamMap& overrides,
                        const std::function<SourceLocation(const std::string& key)>& where = {});

}  // namespace attnbench::config
