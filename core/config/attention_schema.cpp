#include "core/config/attention_schema.h"

#include <algorithm>
#include <cmath>

#include "core/common/registry.h"

namespace attnbench::config {
namespace {

constexpr double kFloat32Max = 3.4028234663852886e38;

Registry<VariantSchema>& schemas() {
  static Registry<VariantSchema> all("attention variant");  // function-local: static-init order
  return all;
}

std::string fmt_bound(double x) { return to_string(Value{x}); }

// Checks one value against its spec; returns it converted to the spec's type (int -> float).
Value check_value(const ParamSpec& spec, const Value& v, const SourceLocation& where,
                  const std::string& variant) {
  Value out = v;
  if (spec.type == ValueType::Float && type_of(v) == ValueType::Int) {
    out = static_cast<double>(std::get<int64_t>(v));
  }
  if (type_of(out) != spec.type) {
    throw InputError(where, "attention." + spec.name + " must be of type " + type_name(spec.type) +
                                " (got " + type_name(type_of(v)) + " " + to_string(v) + ")");
  }
  if (!spec.allowed.empty()) {
    const std::string& s = std::get<std::string>(out);
    if (std::find(spec.allowed.begin(), spec.allowed.end(), s) == spec.allowed.end()) {
      throw InputError(where, "attention." + spec.name + " = \"" + s + "\" is not one of " +
                                  join(spec.allowed) + did_you_mean(s, spec.allowed));
    }
  }
  // nan passes every bound (each comparison is false) and inf no variant means: refused, as for
  // the fixed sections' floats (docs/training.md, "Validation").
  if (spec.type == ValueType::Float && !std::isfinite(std::get<double>(out))) {
    throw InputError(where, "attention." + spec.name + " = " + to_string(out) +
                                " must be a finite number");
  }
  if (spec.type == ValueType::Int || spec.type == ValueType::Float) {
    double x = spec.type == ValueType::Int ? static_cast<double>(std::get<int64_t>(out))
                                           : std::get<double>(out);
    if ((spec.min && x < *spec.min) || (spec.max && x > *spec.max)) {
      std::string range = (spec.min ? fmt_bound(*spec.min) : std::string("-inf")) + ", " +
                          (spec.max ? fmt_bound(*spec.max) : "inf");
      throw InputError(where, "attention." + spec.name + " = " + to_string(out) +
                                  " is out of range [" + range + "] for variant " + variant);
    }
  }
  return out;
}

}  // namespace

void register_variant_schema(VariantSchema schema) {
  const std::string name = schema.name;
  // Every float parameter declares its valid range, within float32, the precision the model
  // computes in (docs/training.md, "Validation"): a value LibTorch cannot convert is refused by
  // the config with the key named, never by a raw library error mid-run.
  for (const ParamSpec& p : schema.params) {
    if (p.type != ValueType::Float) continue;
    const auto in_float32 = [](const std::optional<double>& b) {
      return b && std::abs(*b) <= kFloat32Max;
    };
    if (!in_float32(p.min) || !in_float32(p.max)) {
      detail::registration_error_list().push_back("attention variant '" + name + "': float parameter '" +
                                                  p.name + "' needs min and max within float32");
    }
  }
  schemas().add(name, std::move(schema));
}

const VariantSchema* find_variant_schema(const std::string& name) { return schemas().find(name); }

std::vector<std::string> variant_names() { return schemas().names(); }

std::optional<ConfigProblem> check_variant(const ModelConfig& model,
                                           const AttentionConfig& attention) {
  for (const auto& check : schemas().get(attention.variant).checks) {
    if (auto problem = check(model, attention)) return problem;
  }
  return std::nullopt;
}

bool param_applies(const ParamSpec& spec, const ParamMap& params) {
  for (auto& [key, values] : spec.applies_if) {
    auto it = params.find(key);
    if (it == params.end()) return false;
    std::string v = to_string(it->second);
    if (std::find(values.begin(), values.end(), v) == values.end()) return false;
  }
  return true;
}

ParamMap resolve_params(const std::string& variant, const ParamMap& overrides,
                        const std::function<SourceLocation(const std::string&)>& where) {
  auto loc = [&](const std::string& key) { return where ? where(key) : SourceLocation{"attention"}; };
  const VariantSchema* schema = find_variant_schema(variant);
  if (!schema) throw InputError(loc("variant"), schemas().unknown(variant));
  std::vector<std::string> known;
  for (auto& p : schema->params) known.push_back(p.name);
  for (auto& [key, v] : overrides) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      throw InputError(loc(key), "unknown key attention." + key + " for variant " + variant +
                                     did_you_mean(key, known) + "; valid keys: " + join(known));
    }
  }
  ParamMap all;
  for (auto& p : schema->params) {
    auto it = overrides.find(p.name);
    all[p.name] = it == overrides.end() ? p.default_value
                                        : check_value(p, it->second, loc(p.name), variant);
  }
  // Drop what does not apply (e.g. tau_form under a softmax normaliser) and what is switched off
  // (its neutral value), so neither changes ids. Conditions refer to other parameters' resolved
  // values; iterate until nothing changes so that chains (tau_scale -> tau_form -> normalizer)
  // resolve regardless of order.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& p : schema->params) {
      if (all.count(p.name) && (!param_applies(p, all) || all[p.name] == p.neutral)) {
        all.erase(p.name);
        changed = true;
      }
    }
  }
  return all;
}

}  // namespace attnbench::config
