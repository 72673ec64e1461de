// The parameter schemas of attention variants. Each variant file registers its schema here (and its
// factory in variants/registry.h) from one registration object; the config layer validates
// [attention] against it without knowing any variant. This keeps config a leaf (DESIGN.md).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/common/error.h"
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
};

struct VariantSchema {
  std::string name;         // registered name, e.g. "lazy"
  std::string description;  // one line
  std::vector<ParamSpec> params;
};

void register_variant_schema(VariantSchema schema);  // throws std::logic_error on a duplicate name
const VariantSchema* find_variant_schema(const std::string& name);  // nullptr when unknown
std::vector<std::string> variant_names();                           // sorted

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
