// `attnbench variants`: the registered attention variants with their descriptions, the backends
// that serve them and their parameter schemas (docs/variants.md), as a readable listing or as JSON
// for tools.
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/config/attention_schema.h"
#include "harness/cli/command.h"

namespace attnbench::cli::cmd_variants {
namespace {

nlohmann::ordered_json value_json(const config::Value& v) {
  return std::visit([](const auto& x) { return nlohmann::ordered_json(x); }, v);
}

// "when normalizer is elastic and tau_form is per_token"; "" when the parameter always applies.
std::string condition_text(const config::ParamSpec& p) {
  std::string s;
  for (auto& [key, values] : p.applies_if) {
    s += (s.empty() ? "when " : " and ") + key + (values.size() == 1 ? " is " : " is one of ") +
         join(values, values.size() == 1 ? "" : ", ");
  }
  return s;
}

nlohmann::ordered_json to_json(const config::VariantSchema& s) {
  nlohmann::ordered_json params = nlohmann::ordered_json::array();
  for (auto& p : s.params) {
    nlohmann::ordered_json applies = nlohmann::ordered_json::object();
    for (auto& [key, values] : p.applies_if) applies[key] = values;
    params.push_back({{"name", p.name},
                      {"type", config::type_name(p.type)},
                      {"default", value_json(p.default_value)},
                      {"allowed", p.allowed},
                      {"min", p.min ? nlohmann::ordered_json(*p.min) : nlohmann::ordered_json()},
                      {"max", p.max ? nlohmann::ordered_json(*p.max) : nlohmann::ordered_json()},
                      {"doc", p.doc},
                      {"applies_if", applies}});
  }
  return {{"name", s.name}, {"description", s.description}, {"kernels", s.kernels}, {"parameters", params}};
}

// Every variant runs on the eager reference; `kernels` names the fused kernels that also serve it
// ("" when none does), so that a user knows which variants run fused before choosing a backend.
std::string backends_text(const config::VariantSchema& s) {
  return s.kernels.empty() ? "eager only" : "eager + " + s.kernels;
}

void print_table(const config::VariantSchema& s) {
  fmt::print("{}\n  {}\n  backends: {}\n", s.name, s.description, backends_text(s));
  for (auto& p : s.params) {
    std::string def = config::to_string(p.default_value);
    if (p.type == config::ValueType::String) def = "\"" + def + "\"";
    std::string facts;
    if (!p.allowed.empty()) facts += "; one of " + join(p.allowed, " | ");
    if (p.min) facts += fmt::format("; min {}", config::to_string(config::Value{*p.min}));
    if (p.max) facts += fmt::format("; max {}", config::to_string(config::Value{*p.max}));
    std::string cond = condition_text(p);
    if (!cond.empty()) facts += "; " + cond;
    fmt::print("    {:<12} {:<6} = {}{}\n", p.name, config::type_name(p.type), def, facts);
    fmt::print("    {:<12} {}\n", "", p.doc);
  }
}

int run(const std::string& format) {
  if (format == "json") {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (auto& name : config::variant_names()) all.push_back(to_json(*config::find_variant_schema(name)));
    std::cout << all.dump(2) << "\n";
    return 0;
  }
  bool first = true;
  for (auto& name : config::variant_names()) {
    if (!first) fmt::print("\n");
    first = false;
    print_table(*config::find_variant_schema(name));
  }
  fmt::print("\nSet attention.variant to a name above; every parameter is overridable in "
             "[attention] or with --set attention.<name>=<value>.\n");
  return 0;
}

RegisterCommand reg("variants", "List the attention variants and their parameters",
                    [](CLI::App& app) {
                      auto format = std::make_shared<std::string>("table");
                      app.add_option("--format", *format, "output format")
                          ->check(CLI::IsMember({"table", "json"}))
                          ->capture_default_str();
                      refuse_empty_values(app);
                      return [format] { return run(*format); };
                    });

}  // namespace
}  // namespace attnbench::cli::cmd_variants
