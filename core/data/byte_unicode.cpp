#include "core/data/byte_unicode.h"

namespace attnbench::data {
namespace {

bool stands_for_itself(int b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

struct Table {
  std::array<uint32_t, 256> code{};
  std::array<uint8_t, 256> order{};
  std::array<int, 512> byte_of{};  // code point (< 512) -> byte, -1 when unused
  Table() {
    byte_of.fill(-1);
    int n = 0, k = 0;
    for (int b = 0; b < 256; ++b)
      if (stands_for_itself(b)) order[k++] = static_cast<uint8_t>(b), code[b] = b;
    for (int b = 0; b < 256; ++b)
      if (!stands_for_itself(b)) order[k++] = static_cast<uint8_t>(b), code[b] = 256 + n++;
    for (int b = 0; b < 256; ++b) byte_of[code[b]] = b;
  }
};

const Table& table() {
  static const Table t;
  return t;
}

}  // namespace

uint32_t byte_to_codepoint(uint8_t b) { return table().code[b]; }

const std::array<uint8_t, 256>& byte_rank_order() { return table().order; }

std::optional<std::string> unicode_to_bytes(std::string_view s) {
  const auto& t = table();
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    uint32_t cp;
    if (c < 0x80) {
      cp = c;
      i += 1;
    } else if ((c & 0xE0) == 0xC0 && i + 1 < s.size() &&
               (static_cast<unsigned char>(s[i + 1]) & 0xC0) == 0x80) {
      // Every table code point is below U+0200, so two-byte sequences suffice.
      cp = ((c & 0x1Fu) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3Fu);
      i += 2;
      if (cp < 0x80) return std::nullopt;  // overlong
    } else {
      return std::nullopt;
    }
    if (cp >= t.byte_of.size() || t.byte_of[cp] < 0) return std::nullopt;
    out.push_back(static_cast<char>(t.byte_of[cp]));
  }
  return out;
}

}  // namespace attnbench::data
