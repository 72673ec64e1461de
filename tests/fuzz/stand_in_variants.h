// The attention variants' parameter schemas, as stand-ins for the config fuzz targets: the real
// ones are registered by the torch layers (variants/). Two variants with the same kinds of
// parameters (choices, bounded numbers, a bool that applies conditionally) and the same
// whole-config check as RoPE's (variants/position.cpp: an even head dimension) reach the same
// config code.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/config/attention_schema.h"

namespace attnbench::fuzz {

inline config::ParamSpec stand_in_param(std::string name, config::ValueType type,
                                        config::Value def) {
  config::ParamSpec p;
  p.name = std::move(name);
  p.type = type;
  p.default_value = std::move(def);
  return p;
}

inline config::VariantSchema stand_in_family(std::string name) {
  using config::ValueType;
  std::vector<config::ParamSpec> ps;
  ps.push_back(stand_in_param("position", ValueType::String, std::string("rope")));
  ps.back().allowed = {"rope", "alibi", "none"};
  ps.push_back(stand_in_param("rope_theta", ValueType::Float, 10000.0));
  ps.back().min = 1.0;
  ps.back().max = 1e12;
  ps.back().applies_if = {{"position", {"rope"}}};
  ps.push_back(stand_in_param("bias_window", ValueType::Int, int64_t{64}));
  ps.back().min = 1.0;
  ps.back().max = 1e6;
  ps.push_back(stand_in_param("normalizer", ValueType::String, std::string("softmax")));
  ps.back().allowed = {"softmax", "elastic"};
  ps.push_back(stand_in_param("renormalize", ValueType::Bool, false));
  ps.back().applies_if = {{"normalizer", {"elastic"}}};
  auto even_head_dim = [](const config::ModelConfig& m, const config::AttentionConfig& a)
      -> std::optional<config::ConfigProblem> {
    if (config::param_or<std::string>(a.params, "position", "") != "rope" || m.head_dim() % 2 == 0) {
      return std::nullopt;
    }
    return config::ConfigProblem{"model.n_head", "RoPE needs an even head dimension"};
  };
  config::VariantSchema s;
  s.name = std::move(name);
  s.description = "fuzz stand-in";
  s.params = std::move(ps);
  s.checks = {even_head_dim};
  return s;
}

// Registers "softmax" and "lazy" once; call from a static initialiser.
inline bool register_stand_in_variants() {
  config::register_variant_schema(stand_in_family("softmax"));
  config::register_variant_schema(stand_in_family("lazy"));
  return true;
}

}  // namespace attnbench::fuzz
