#include "core/config/toml_bridge.h"

#include <vector>

#include "core/config/toml_depth.h"
#include "core/data/utf8.h"

namespace attnbench::config {

SourceLocation where_of(const toml::source_region& region, const std::string& fallback) {
  SourceLocation loc;
  loc.file = region.path ? std::string(*region.path) : fallback;
  loc.line = static_cast<int>(region.begin.line);
  loc.column = static_cast<int>(region.begin.column);
  return loc;
}

std::optional<Value> scalar(const toml::node& node) {
  if (auto v = node.as_boolean()) return Value{v->get()};
  if (auto v = node.as_integer()) return Value{static_cast<int64_t>(v->get())};
  if (auto v = node.as_floating_point()) return Value{v->get()};
  if (auto v = node.as_string()) return Value{v->get()};
  return std::nullopt;
}

std::string node_kind(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table: return "table";
    case toml::node_type::array: return "array";
    case toml::node_type::string: return "string";
    case toml::node_type::integer: return "int";
    case toml::node_type::floating_point: return "float";
    case toml::node_type::boolean: return "bool";
    default: return "date/time";
  }
}

Value scalar_value(const toml::node& node, const std::string& what,
                   const std::string& fallback_file) {
  if (auto v = scalar(node)) return *v;
  std::string got = node.is_array() ? "a list" : node.is_table() ? "a table" : "a date/time";
  throw InputError(where_of(node.source(), fallback_file),
                   what + " must be a string, integer, float or boolean (got " + got + ")");
}

Assignment parse_assignment(const std::string& text) {
  const auto eq = text.find('=');
  const SourceLocation loc{"--set " + text};
  if (eq == std::string::npos || eq == 0) {
    throw InputError(loc, "expected KEY=VALUE with a dotted key, e.g. train.lr=3e-4");
  }
  check_toml_depth(text, loc.file);  // the key and an inline-table value alike
  Assignment a;
  a.key = text.substr(0, eq);
  if (a.key.front() == '.' || a.key.back() == '.' || a.key.find("..") != std::string::npos) {
    throw InputError(loc, "empty component in key '" + a.key + "'");
  }
  const std::string value = text.substr(eq + 1);
  // `KEY=` is more likely a shell variable that expanded to nothing than a wish for an empty
  // string: refused, never read as "" (nor as the key's default). "" says it explicitly.
  if (value.find_first_not_of(" \t") == std::string::npos) {
    throw InputError(loc, "empty value for " + a.key + ": give a value (\"\" for an empty string), "
                          "or leave the --set out for the key's default");
  }
  toml::table parsed;
  try {
    parsed = toml::parse("v = " + value);
  } catch (const toml::parse_error&) {
    // A bare word is a string. Config text is UTF-8 as in a TOML file: the canonical JSON and the
    // run id are made from it (an invalid byte, e.g. a Latin-1 path, used to surface as a JSON error).
    if (const size_t valid = data::utf8_valid_prefix(value); valid != value.size()) {
      throw InputError(loc, "the value of " + a.key + " is not valid UTF-8 (byte " +
                                std::to_string(valid + 1) + "); config values are UTF-8 text");
    }
    parsed = toml::table{{"v", value}};
  }
  // Node copies from `parsed` carry a position in the one-line document "v = ..."; re-insert a
  // fresh copy (toml++ copies no positions) so that errors about the value say "--set KEY".
  parsed.get("v")->visit([&](auto&& n) {
    using N = std::decay_t<decltype(n)>;
    if constexpr (toml::is_table<N> || toml::is_array<N>) {
      a.holder.insert_or_assign("v", n);
    } else {
      a.holder.insert_or_assign("v", N{n.get()});
    }
  });
  return a;
}

void assign_dotted(toml::table& table, const std::string& dotted_key, const toml::node& value) {
  toml::table* t = &table;
  std::string rest = dotted_key;
  for (size_t dot; (dot = rest.find('.')) != std::string::npos;) {
    const std::string section = rest.substr(0, dot);
    rest = rest.substr(dot + 1);
    toml::node* child = t->get(section);
    if (!child) child = &t->insert_or_assign(section, toml::table{}).first->second;
    t = child->as_table();
    if (!t) {
      throw UsageError("cannot set " + dotted_key + ": " + section + " is a value, not a section");
    }
  }
  value.visit([&](auto&& n) { t->insert_or_assign(rest, n); });
}

void assign_dotted(toml::table& table, const std::string& dotted_key, const Value& value) {
  toml::table holder;
  std::visit([&](const auto& x) { holder.insert_or_assign("v", x); }, value);
  assign_dotted(table, dotted_key, *holder.get("v"));
}

}  // namespace attnbench::config
