#include "evals/tasks/py_text.h"

namespace attnbench::evals {

bool py_isspace(char32_t c) {
  if (c >= 0x09 && c <= 0x0D) return true;
  if (c >= 0x1C && c <= 0x20) return true;
  if (c == 0x85 || c == 0xA0 || c == 0x1680) return true;
  if (c >= 0x2000 && c <= 0x200A) return true;
  return c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

char32_t next_code_point(const std::string& s, size_t& pos) {
  const auto b0 = static_cast<unsigned char>(s[pos]);
  if (b0 < 0x80) {
    ++pos;
    return b0;
  }
  const int extra = (b0 >> 5) == 0x6 ? 1 : (b0 >> 4) == 0xE ? 2 : (b0 >> 3) == 0x1E ? 3 : -1;
  if (extra < 0 || pos + extra >= s.size()) {
    ++pos;
    return 0xFFFD;
  }
  char32_t c = b0 & (0x7F >> (extra + 1));
  for (int k = 1; k <= extra; ++k) {
    const auto b = static_cast<unsigned char>(s[pos + k]);
    if ((b & 0xC0) != 0x80) {
      ++pos;
      return 0xFFFD;
    }
    c = (c << 6) | (b & 0x3F);
  }
  pos += extra + 1;
  return c;
}

namespace {
// Byte offset of the first code point that is not whitespace (s.size() when all are).
size_t first_non_space(const std::string& s) {
  size_t pos = 0;
  while (pos < s.size()) {
    size_t at = pos;
    if (!py_isspace(next_code_point(s, pos))) return at;
  }
  return s.size();
}

// Byte offset one past the last code point that is not whitespace (0 when all are).
size_t end_non_space(const std::string& s) {
  size_t end = 0, pos = 0;
  while (pos < s.size()) {
    char32_t c = next_code_point(s, pos);
    if (!py_isspace(c)) end = pos;
  }
  return end;
}
}  // namespace

std::string py_lstrip(const std::string& s) { return s.substr(first_non_space(s)); }

std::string py_rstrip(const std::string& s) { return s.substr(0, end_non_space(s)); }

std::string py_strip(const std::string& s) { return py_lstrip(py_rstrip(s)); }

std::string py_replace(const std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;  // lm-eval never replaces the empty string
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  for (size_t hit; (hit = s.find(from, pos)) != std::string::npos; pos = hit + from.size()) {
    out.append(s, pos, hit - pos).append(to);
  }
  out.append(s, pos, std::string::npos);
  return out;
}

std::string py_capitalize_ascii(const std::string& s) {
  std::string out = s;
  for (size_t i = 0; i < out.size(); ++i) {
    char& c = out[i];
    if (i == 0 && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (i > 0 && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

int64_t py_split_whitespace_count(const std::string& s) {
  int64_t pieces = 1;
  bool in_run = false;
  size_t pos = 0;
  while (pos < s.size()) {
    bool space = py_isspace(next_code_point(s, pos));
    if (space && !in_run) ++pieces;  // each maximal run separates two pieces
    in_run = space;
  }
  return pieces;
}

}  // namespace attnbench::evals
