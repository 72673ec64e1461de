// TOML nesting bounded before parsing (docs/reliability.md, "Configs"): toml++ builds a dotted key
// a.b.c... as nested tables and frees them recursively, so tens of thousands of dotted parts
// overflow the stack (SIGSEGV). Every TOML text attnbench reads (run configs, sweep files, their
// base configs, `--set` keys) is scanned first; no real config nests more than a few levels.
#pragma once
#include <string>
#include <string_view>

namespace attnbench::config {

// The most dotted parts one key may have (`a.b.c` has 3), in a table header or a key/value line.
inline constexpr int kMaxKeyParts = 64;

// InputError at `source`:line:col of the first key with more than kMaxKeyParts parts. Strings
// (basic, literal, multi-line) and comments are skipped; a dot elsewhere joins key parts, and any
// character that cannot be part of a key ends the key (a float's one dot never comes near the bound).
void check_toml_depth(std::string_view text, const std::string& source);

}  // namespace attnbench::config
