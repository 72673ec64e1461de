// GPT-2's byte-to-unicode table (openai/gpt-2 encoder.py, bytes_to_unicode): encoder.json and
// vocab.bpe spell every token as a string of printable code points, one per byte. The 188 bytes
// that are printable and not a space ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF) stand for
// themselves; the other 68 bytes, in increasing order, map to U+0100, U+0101, ... (so ' ' = 0x20
// becomes U+0120 'Ġ').
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace attnbench::data {

// The code point that spells byte b.
uint32_t byte_to_codepoint(uint8_t b);

// The raw bytes spelled by a UTF-8 string of table code points, or nullopt when the string is not
// valid UTF-8 or holds a code point outside the table.
std::optional<std::string> unicode_to_bytes(std::string_view spelled);

// The table order of bytes that tiktoken uses for the ranks of single bytes
// (tiktoken.load.data_gym_to_mergeable_bpe_ranks: printable bytes first, then the rest).
const std::array<uint8_t, 256>& byte_rank_order();

}  // namespace attnbench::data
