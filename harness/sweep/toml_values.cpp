#include "harness/sweep/toml_values.h"


namespace attnbench::sweep {

SourceLocation where_of(const toml::source_region& region, const std::string& fallback) {
  SourceLocation loc;
  loc.file = region.path ? *region.path : fallback;
  loc.line = static_cast<int>(region.begin.line);
  loc.column = static_cast<int>(region.begin.column);
  return loc;
}

config::Value scalar_value(const toml::node& node, const std::string& what,
                           const std::string& fallback_file) {
  if (auto v = node.as_boolean()) return v->get();
  if (auto v = node.as_integer()) return static_cast<int64_t>(v->get());
  if (auto v = node.as_floating_point()) return v->get();
  if (auto v = node.as_string()) return v->get();
  std::string got = node.is_array() ? "a list" : node.is_table() ? "a table" : "a date/time";
  throw InputError(where_of(node.source(), fallback_file),
                   what + " must be a string, integer, float or boolean (got " + got + ")");
}

void assign_dotted(toml::table& table, const std::string& dotted_key, const config::Value& v) {
  toml::table* t = &table;
  std::string rest = dotted_key;
  for (size_t dot; (dot = rest.find('.')) != std::string::npos;) {
    std::string section = rest.substr(0, dot);
    rest = rest.substr(dot + 1);
    toml::node* child = t->get(section);
    if (!child) {
      t->insert_or_assign(section, toml::table{});
      child = t->get(section);
    }
    if (!child->is_table()) {
      throw UsageError("cannot set " + dotted_key + ": " + section + " is a value, not a section");
    }
    t = child->as_table();
  }
  std::visit([&](const auto& x) { t->insert_or_assign(rest, x); }, v);
}

bool same_value(const config::Value& a, const config::Value& b) {
  auto num = [](const config::Value& v, double& out) {
    if (auto i = std::get_if<int64_t>(&v)) return out = static_cast<double>(*i), true;
    if (auto d = std::get_if<double>(&v)) return out = *d, true;
    return false;
  };
  double x, y;
  if (num(a, x) && num(b, y)) return x == y;
  return a == b;
}

std::string label_value(const config::Value& v) {
  if (auto s = std::get_if<std::string>(&v)) return *s;
  return config::to_string(v);
}

}  // namespace attnbench::sweep
