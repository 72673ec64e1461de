// Comparing and labelling the scalar values of a sweep's grid (the TOML side is
// core/config/toml_bridge.h).
#pragma once
#include <string>

#include "core/config/value.h"

namespace attnbench::sweep {

// Equality across int/float (a grid of [-1, 0] matches an exclude of -1.0), exact otherwise.
bool same_value(const config::Value& a, const config::Value& b);

// "lazy", "true", "-1", "0.5": the value as a cell label shows it.
std::string label_value(const config::Value& v);

}  // namespace attnbench::sweep
