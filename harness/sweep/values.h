// Comparing, labelling and checking the scalar values of a sweep's grid (the TOML side is
// core/config/toml_bridge.h).
#pragma once
#include <string>

#include "core/common/error.h"
#include "core/config/value.h"

namespace attnbench::sweep {

// Equality across int/float (a grid of [-1, 0] matches an exclude of -1.0), exact otherwise.
bool same_value(const config::Value& a, const config::Value& b);

// "lazy", "true", "-1", "0.5": the value as a cell label shows it.
std::string label_value(const config::Value& v);

// Refuses, with an InputError at `where`, a value that no sweep setting may hold (docs/sweeps.md,
// "Errors, before any work"): a float that is not finite (nan and inf mean no setting, and nan
// never equals itself, so it would defeat the duplicate and [[exclude]] checks) and a string with
// a control character (labels are written into listings and into comment lines of the Slurm
// script, where a line break would start a shell command). `what` names the value for the message.
void check_sweep_value(const config::Value& v, const SourceLocation& where, const std::string& what);

// Whether `s` holds a control character (a line break, tab, escape, ...: bytes below 0x20, 0x7f).
bool has_control_character(const std::string& s);

}  // namespace attnbench::sweep
