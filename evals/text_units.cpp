#include "evals/text_units.h"

#include <stdexcept>

namespace attnbench::evals {

bool is_python_space(char32_t cp) {
  // Python 3's _PyUnicode_IsWhitespace table.
  switch (cp) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D:
    case 0x1C: case 0x1D: case 0x1E: case 0x1F: case 0x20:
    case 0x85: case 0xA0: case 0x1680:
    case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

namespace {

// Decodes the code point starting at utf8[i]; advances i past it.
char32_t next_codepoint(std::string_view utf8, size_t& i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(utf8[k]); };
  unsigned char lead = byte(i);
  int extra = lead < 0x80 ? 0 : (lead >> 5) == 0x6 ? 1 : (lead >> 4) == 0xE ? 2
              : (lead >> 3) == 0x1E ? 3 : -1;
  if (extra < 0 || i + static_cast<size_t>(extra) >= utf8.size()) {
    throw std::invalid_argument("malformed UTF-8 at byte " + std::to_string(i));
  }
  char32_t cp = extra == 0 ? lead : lead & (0x3F >> extra);
  for (int k = 1; k <= extra; ++k) {
    unsigned char c = byte(i + static_cast<size_t>(k));
    if ((c & 0xC0) != 0x80) throw std::invalid_argument("malformed UTF-8 at byte " + std::to_string(i));
    cp = (cp << 6) | (c & 0x3F);
  }
  i += static_cast<size_t>(extra) + 1;
  return cp;
}

}  // namespace

size_t codepoint_length(std::string_view utf8) {
  size_t n = 0;
  for (size_t i = 0; i < utf8.size();) {
    next_codepoint(utf8, i);
    ++n;
  }
  return n;
}

size_t rstrip_length(std::string_view utf8) {
  size_t keep = 0;
  for (size_t i = 0; i < utf8.size();) {
    char32_t cp = next_codepoint(utf8, i);
    if (!is_python_space(cp)) keep = i;
  }
  return keep;
}

}  // namespace attnbench::evals
