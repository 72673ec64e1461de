#include "core/config/value.h"

#include <fmt/format.h>

namespace attnbench::config {

const char* type_name(ValueType t) {
  switch (t) {
    case ValueType::Bool: return "bool";
    case ValueType::Int: return "int";
    case ValueType::Float: return "float";
    case ValueType::String: return "string";
  }
  return "?";
}

ValueType type_of(const Value& v) { return static_cast<ValueType>(v.index()); }

std::string to_string(const Value& v) {
  switch (type_of(v)) {
    case ValueType::Bool: return std::get<bool>(v) ? "true" : "false";
    case ValueType::Int: return std::to_string(std::get<int64_t>(v));
    case ValueType::Float: return fmt::format("{}", std::get<double>(v));
    case ValueType::String: return std::get<std::string>(v);
  }
  return "";
}

}  // namespace attnbench::config
