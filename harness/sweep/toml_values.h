// Small bridges between toml++ nodes and the config layer's scalar values, keeping positions.
#pragma once
#include <string>

#include <toml++/toml.h>

#include "core/common/error.h"
#include "core/config/value.h"

namespace attnbench::sweep {

// The node's position; `fallback` names the file when the node carries none.
SourceLocation where_of(const toml::source_region& region, const std::string& fallback);

// A scalar node as a config value; throws InputError for arrays, tables and dates, naming `what`.
config::Value scalar_value(const toml::node& node, const std::string& what,
                           const std::string& fallback_file);

// A fresh toml node holding `v` (no position: toml++ never copies positions).
void assign_dotted(toml::table& table, const std::string& dotted_key, const config::Value& v);

// Equality across int/float (a grid of [-1, 0] matches an exclude of -1.0), exact otherwise.
bool same_value(const config::Value& a, const config::Value& b);

// "lazy", "true", "-1", "0.5": the value as a cell label shows it.
std::string label_value(const config::Value& v);

}  // namespace attnbench::sweep
