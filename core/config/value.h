// A typed scalar config value, as TOML gives it.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <variant>

namespace attnbench::config {

using Value = std::variant<bool, int64_t, double, std::string>;
enum class ValueType { Bool, Int, Float, String };

const char* type_name(ValueType t);  // "bool", "int", "float", "string"
ValueType type_of(const Value& v);
std::string to_string(const Value& v);  // TOML spelling: true, 3, 0.5, "text" -> text

using ParamMap = std::map<std::string, Value>;

}  // namespace attnbench::config
