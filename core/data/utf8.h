// UTF-8 well-formedness (Unicode 15, table 3-7: no overlong forms, no surrogates, nothing above
// U+10FFFF). The tokenizer splits its input into maximal valid runs and invalid bytes with these
// (docs/tokenizer.md, "Invalid UTF-8").
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace attnbench::data {

inline constexpr const char* kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD, UTF-8

// Length (1-4) of the well-formed UTF-8 sequence that starts s, or 0 when none does.
size_t utf8_sequence_length(std::string_view s);

// Length of the longest well-formed prefix of s.
size_t utf8_valid_prefix(std::string_view s);

// Number of leading bytes of s at which no well-formed sequence starts.
size_t utf8_invalid_prefix(std::string_view s);

// s as UTF-8, each ill-formed subsequence replaced by U+FFFD the way Rust's
// String::from_utf8_lossy does (one per maximal subpart, Unicode's recommended practice): what the
// tokenizers library's decoders return.
std::string utf8_lossy(std::string_view s);

}  // namespace attnbench::data
