#include "core/data/utf8.h"

#include <cstdint>
#include <cstring>

namespace attnbench::data {

size_t utf8_sequence_length(std::string_view s) {
  if (s.empty()) return 0;
  auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  auto cont = [&](size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (s.size() < 2) return 0;
    unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return b(1) >= lo && b(1) <= hi && cont(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (s.size() < 2) return 0;
    unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return b(1) >= lo && b(1) <= hi && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

size_t utf8_valid_prefix(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    // ASCII fast path, eight bytes at a time: most text is ASCII.
    while (i + 8 <= s.size()) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      if (w & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= s.size()) break;
    size_t n = utf8_sequence_length(s.substr(i));
    if (n == 0) break;
    i += n;
  }
  return i;
}

size_t utf8_invalid_prefix(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && utf8_sequence_length(s.substr(i)) == 0) ++i;
  return i;
}

namespace {

// How many bytes of a truncated or broken sequence one U+FFFD stands for: the longest prefix of
// s that could still begin a well-formed sequence (Unicode table 3-7), at least one byte.
size_t maximal_subpart(std::string_view s) {
  auto b = [&](size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0; };
  const unsigned char c = b(0);
  size_t need = c >= 0xC2 && c <= 0xDF   ? 1
                : c >= 0xE0 && c <= 0xEF ? 2
                : c >= 0xF0 && c <= 0xF4 ? 3
                                         : 0;
  unsigned char lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
  unsigned char hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
  size_t n = 1;
  while (n <= need && b(n) >= lo && b(n) <= hi) ++n, lo = 0x80, hi = 0xBF;
  return n;
}

}  // namespace

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    size_t valid = utf8_valid_prefix(bytes.substr(i));
    out.append(bytes.substr(i, valid));
    i += valid;
    if (i < bytes.size()) out += kReplacementCharacter, i += maximal_subpart(bytes.substr(i));
  }
  return out;
}

}  // namespace attnbench::data
