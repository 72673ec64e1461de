// `attnbench variants`: the registered attention variants with their descriptions, the backends
// that serve them and their parameter schemas (docs/variants.md), as a readable listing or as JSON
// for tools.
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/config/attention_schema.h"
#include "harness/cli/command.h"
#include "variants/registry.h"

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

// Whether the variant can continue a pretrained model (model.init_from, docs/pretrained.md): at its
// defaults, or why not (its registration's pretrained_start).
std::string pretrained_text(const config::VariantSchema& s) {
  const variants::VariantRegistration& r = variants::find_variant(s.name);
  if (!r.pretrained_start) return "no: it computes other than softmax attention from the start";
  config::AttentionConfig a;
  a.variant = s.name;
  a.params = config::resolve_params(s.name, {});
  const std::string why = r.pretrained_start(a);
  return why.empty() ? "yes, at its defaults" : "not at its defaults: " + why;
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
  return {{"name", s.name},
          {"description", s.description},
          {"kernels", s.kernels},
          {"continues_pretrained", pretrained_text(s)},
          {"parameters", params}};
}

// Every variant runs on the eager reference; `kernels` names the fused kernels that also serve it
// ("" when none does), so that a user knows which variants run fused before choosing a backend.
std::string backends_text(const config::VariantSchema& s) {
  return s.kernels.empty() ? "eager only" : "eager + " + s.kernels;
}

constexpr size_t kWidth = 100;  // the listing fits a terminal this wide

// `text` after `first` (the first line's start), broken at spaces into lines of at most kWidth
// columns, the later lines indented by `indent` spaces. A word longer than a line stays whole.
std::string wrapped(const std::string& first, const std::string& text, size_t indent) {
  std::string out = first;
  size_t column = first.size();
  bool after_word = !first.empty() && first.back() != ' ';  // a label the text is set apart from
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    if (after_word && column + 1 + word.size() > kWidth) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
      after_word = false;
    }
    if (after_word) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    after_word = true;
  }
  return out + "\n";
}

// Every parameter: its type, default, allowed values, bounds and when it applies, then its doc.
void print_parameters(const config::VariantSchema& s) {
  for (auto& p : s.params) {
    std::string def = config::to_string(p.default_value);
    if (p.type == config::ValueType::String) def = "\"" + def + "\"";
    std::string facts;
    if (!p.allowed.empty()) facts += "; one of " + join(p.allowed, " | ");
    if (p.min) facts += fmt::format("; min {}", config::to_string(config::Value{*p.min}));
    if (p.max) facts += fmt::format("; max {}", config::to_string(config::Value{*p.max}));
    std::string cond = condition_text(p);
    if (!cond.empty()) facts += "; " + cond;
    fmt::print("{}", wrapped(fmt::format("    {:<12} {:<6} =", p.name, config::type_name(p.type)),
                             def + facts, 17));
    fmt::print("{}", wrapped(std::string(17, ' '), p.doc, 17));
  }
}

// The listing: per variant its name and description, with `details` its backends and parameters.
void print_variant(const config::VariantSchema& s, bool details) {
  if (!details) {
    fmt::print("{}", wrapped(fmt::format("{:<18}", s.name), s.description, 18));
    return;
  }
  fmt::print("{}\n{}{}", s.name, wrapped("  ", s.description, 2), wrapped("  backends:", backends_text(s), 4));
  fmt::print("{}", wrapped("  continues a pretrained model:", pretrained_text(s), 4));
  print_parameters(s);
}

int run(const std::string& format, const std::vector<std::string>& names, bool details) {
  std::vector<std::string> shown = names.empty() ? config::variant_names() : names;
  std::vector<const config::VariantSchema*> schemas;
  for (const auto& name : shown) {
    const config::VariantSchema* s = config::find_variant_schema(name);
    if (!s) throw UsageError("unknown variant '" + name + "'" + did_you_mean(name, config::variant_names()) +
                             "; registered: " + join(config::variant_names()));
    schemas.push_back(s);
  }
  if (format == "json") {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const auto* s : schemas) all.push_back(to_json(*s));
    std::cout << all.dump(2) << "\n";
    return 0;
  }
  details = details || !names.empty();
  for (size_t i = 0; i < schemas.size(); ++i) {
    if (details && i > 0) fmt::print("\n");
    print_variant(*schemas[i], details);
  }
  fmt::print("\n{}", wrapped("", std::string(details ? "" : "attnbench variants NAME (or --details) "
                                                             "lists a variant's backends and parameters. ") +
                                      "Set attention.variant to a name above; every parameter is "
                                      "overridable in [attention] or with --set attention.<name>=<value>.", 0));
  return 0;
}

RegisterCommand reg("variants", "List the attention variants and their parameters",
                    [](CLI::App& app) {
                      struct Args {
                        std::string format = "table";
                        std::vector<std::string> names;
                        bool details = false;
                      };
                      auto a = std::make_shared<Args>();
                      app.add_option("names", a->names, "variants to show in full (default: all, one "
                                                        "line each)");
                      app.add_option("--format", a->format, "output format")
                          ->check(CLI::IsMember({"table", "json"}))
                          ->capture_default_str();
                      app.add_flag("--details", a->details,
                                   "every variant's backends and parameters (the JSON always has them)");
                      refuse_empty_values(app);
                      return [a] { return run(a->format, a->names, a->details); };
                    });

}  // namespace
}  // namespace attnbench::cli::cmd_variants
