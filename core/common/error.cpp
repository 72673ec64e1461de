#include "core/common/error.h"

#include <algorithm>

#include <fmt/format.h>

namespace attnbench {

std::string SourceLocation::str() const {
  std::string s = file;
  if (line > 0) s += ":" + std::to_string(line);
  if (line > 0 && column > 0) s += ":" + std::to_string(column);
  return s;
}

InputError::InputError(SourceLocation where, const std::string& what)
    : UsageError(where.str() + ": " + what), where_(std::move(where)) {}

namespace {
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

std::string nearest(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_d) best_d = d, best = c;
  }
  // Plausible: at most a third of the longer word differs (typos, not unrelated words).
  size_t len = std::max(word.size(), best.size());
  if (best.empty() || best_d * 3 > len + 1) return "";
  return best;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  std::string n = nearest(word, candidates);
  return n.empty() ? "" : " (did you mean '" + n + "'?)";
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) s += (i ? sep : "") + items[i];
  return s;
}

namespace {

std::string escape_controls(const std::string& message, bool line_breaks) {
  std::string out;
  out.reserve(message.size());
  for (size_t i = 0; i < message.size(); ++i) {
    const auto c = static_cast<unsigned char>(message[i]);
    const auto next = i + 1 < message.size() ? static_cast<unsigned char>(message[i + 1]) : 0;
    if (line_breaks && (c == '\n' || c == '\t' || c == '\r')) {
      out += c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r";
    } else if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else if (c == 0xc2 && next >= 0x80 && next <= 0x9f) {  // UTF-8 of U+0080..U+009F
      out += fmt::format("\\u00{:02x}", next);
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace

std::string terminal_safe(const std::string& message) { return escape_controls(message, false); }

std::string one_line(const std::string& s) { return escape_controls(s, true); }

}  // namespace attnbench
