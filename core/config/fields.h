// The fixed sections of a run config ([model] [data] [train] [eval]) as a table of typed fields:
// one place that says each key's name, type, default (the struct's initialiser), bound and doc, used
// by parsing, validation, canonical JSON and `attnbench config --schema`. [attention] is described
// by the variant schemas instead (attention_schema.h).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/config/run_config.h"
#include "core/config/value.h"

namespace attnbench::config {

struct Field {
  std::string section;  // "model", "data", "train", "eval"
  std::string name;
  ValueType type;
  std::string doc;
  std::function<void(RunConfig&, const Value&)> set;  // value already of `type`
  std::function<Value(const RunConfig&)> get;
  // "" when valid, else what is wrong ("must be > 0"); checked after the whole config is resolved.
  std::function<std::string(const RunConfig&)> check;
};

const std::vector<Field>& fields();
const Field* find_field(const std::string& section, const std::string& name);
std::vector<std::string> field_names(const std::string& section);
// Sections in canonical order.
const std::vector<std::string>& section_names();

}  // namespace attnbench::config
