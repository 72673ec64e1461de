// The one bridge between toml++ and the config layer's values, shared by run configs and sweep
// files: where a node came from, a scalar node as a Value, and `--set KEY=VALUE` assignments.
#pragma once
#include <optional>
#include <string>

#include <toml++/toml.h>

#include "core/common/error.h"
#include "core/config/value.h"

namespace attnbench::config {

// The node's position; `fallback` names the file when the node carries none (a node made by
// --set carries none).
SourceLocation where_of(const toml::source_region& region, const std::string& fallback);

// A TOML scalar as a Value; nullopt for arrays, tables and dates.
std::optional<Value> scalar(const toml::node& node);

// The node's TOML type in messages: "table", "array", "string", "int", "float", "bool", "date/time".
std::string node_kind(const toml::node& node);

// scalar(node), or an InputError at the node naming `what` for anything that is not a scalar.
Value scalar_value(const toml::node& node, const std::string& what,
                   const std::string& fallback_file);

// A command-line `KEY=VALUE` (`--set`): the dotted key and the value parsed as TOML (3e-4, true,
// "x", [1, 2]); a bare word that is not TOML is a string. The value carries no source position, so
// errors about it say "--set KEY". InputError when there is no '=', a key component is empty or the
// value is empty (`KEY=`; `KEY=""` is the empty string).
struct Assignment {
  std::string key;
  toml::table holder;  // {"v": the value}
  const toml::node& value() const { return *holder.get("v"); }
};
Assignment parse_assignment(const std::string& text);

// Sets `table`[dotted_key] to a copy of `value`, creating the sections on the way. UsageError when
// a section on the way is a value.
void assign_dotted(toml::table& table, const std::string& dotted_key, const toml::node& value);
void assign_dotted(toml::table& table, const std::string& dotted_key, const Value& value);

}  // namespace attnbench::config
