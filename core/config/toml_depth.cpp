#include "core/config/toml_depth.h"

#include <cctype>

#include "core/common/error.h"

namespace attnbench::config {

namespace {

// A scan of the text that tracks its line and column.
struct Cursor {
  std::string_view text;
  size_t at = 0;
  int line = 1, column = 1;

  bool done() const { return at >= text.size(); }
  bool starts(std::string_view s) const { return text.substr(at, s.size()) == s; }
  void advance(size_t n = 1) {
    for (; n > 0 && !done(); --n, ++at) {
      if (text[at] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
  }
  // Past the string that starts here (its quote or triple quote); an unterminated one runs to the
  // end of the text, for the parser to report.
  void skip_string() {
    const char quote = text[at];
    const bool multi = starts(std::string(3, quote));
    const bool escapes = quote == '"';
    advance(multi ? 3 : 1);
    while (!done()) {
      if (escapes && text[at] == '\\') {
        advance(2);
      } else if (multi ? starts(std::string(3, quote)) : text[at] == quote) {
        advance(multi ? 3 : 1);
        return;
      } else if (!multi && text[at] == '\n') {
        return;  // a single-line string cannot span lines
      } else {
        advance();
      }
    }
  }
};

bool key_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == ' ' || c == '\t';
}

}  // namespace

void check_toml_depth(std::string_view text, const std::string& source) {
  Cursor c{text};
  int parts = 1;
  while (!c.done()) {
    const char ch = c.text[c.at];
    if (ch == '"' || ch == '\'') {
      c.skip_string();  // a quoted key part, or a value: neither ends a dotted key
      continue;
    }
    if (ch == '#') {
      while (!c.done() && c.text[c.at] != '\n') c.advance();
      continue;
    }
    if (ch == '.') {
      if (++parts > kMaxKeyParts) {
        throw InputError({source, c.line, c.column},
                         "a key with more than " + std::to_string(kMaxKeyParts) +
                             " dotted parts; no config nests this deep (refused before parsing)");
      }
    } else if (!key_char(ch)) {
      parts = 1;
    }
    c.advance();
  }
}

}  // namespace attnbench::config
