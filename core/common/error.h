// Errors are exceptions with context, caught once at the CLI (harness/cli/main.cpp), printed to
// stderr. UsageError exits 2 (bad usage, config, or input files: the user must change something);
// every other std::exception exits 1 (a runtime failure).
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

namespace attnbench {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where a value came from: a file position (TOML, JSONL) or a command-line override.
struct SourceLocation {
  std::string file;  // path, or e.g. "--set" for command-line overrides
  int line = 0;      // 1-based; 0 = unknown
  int column = 0;    // 1-based; 0 = unknown
  std::string str() const;  // "file:line:col", "file:line" or "file"
};

// A UsageError whose message starts with the location: "cfg.toml:3:1: unknown key ...".
class InputError : public UsageError {
 public:
  InputError(SourceLocation where, const std::string& what);
  const SourceLocation& where() const { return where_; }

 private:
  SourceLocation where_;
};

// The candidate closest to `word` by edit distance, or "" when nothing is plausibly meant.
std::string nearest(const std::string& word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" when a close candidate exists, else "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

// "a, b, c" for messages that list the valid choices.
std::string join(const std::vector<std::string>& items, const std::string& sep = ", ");

// `message` safe to print on a terminal: control characters other than line breaks and tabs (an
// escape sequence in a config key would otherwise recolour or rewrite the user's terminal) as
// \xNN, C1 controls (U+0080..U+009F) as \u00NN. Used where the CLI prints every error.
std::string terminal_safe(const std::string& message);
// `s` on one line, for a message that quotes a refused string: as terminal_safe, and line breaks,
// tabs and carriage returns as \n, \t, \r.
std::string one_line(const std::string& s);

}  // namespace attnbench
