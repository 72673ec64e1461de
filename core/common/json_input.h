// JSON that a user hands attnbench (a model folder's config.json, tokenizer.json and
// tokenizer_config.json, a sharded model's index, a safetensors header; docs/reliability.md,
// "Hostile input"): bounded before anything walks it. nlohmann's parser itself is iterative, but
// copying, dumping and every reader that recurses over a value are not, so a value nested 100,000
// deep would overflow the stack; and a message never echoes more of the input than a short excerpt.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace attnbench {

struct JsonLimits {
  // Objects and arrays inside others (the top level is depth 0). The files attnbench reads nest a
  // handful deep (tokenizer.json's Sequence of Sequences is about 6).
  int max_depth = 64;
  uint64_t max_bytes = 256ull << 20;  // the file's size
};

// `s` for a message: single-quoted, cut to 80 bytes ("...'" when longer), control bytes as \xNN.
std::string quoted_excerpt(std::string_view s);

// What a JSON value is, for "found ..." in messages, never a dump of the value: "the number 3",
// "the string 'abc'", "null", "an object", "an array", "a boolean".
std::string describe_json(const nlohmann::json& v);

// Parses `text`, the content of `file` (`what`: its role, "the header", "config.json"), refusing
// with an InputError naming the file, in one line: text that is not JSON (nlohmann's reason, not
// its exception text), a key given twice in one object (JSON readers differ on which copy wins),
// and objects or arrays nested deeper than limits.max_depth.
nlohmann::json parse_json_input(std::string_view text, const std::filesystem::path& file,
                                const std::string& what, const JsonLimits& limits = {});

// read_regular_file (core/common/regular_file.h), refused past limits.max_bytes before it is read,
// then parse_json_input.
nlohmann::json read_json_input(const std::filesystem::path& file, const std::string& what,
                               const JsonLimits& limits = {});

}  // namespace attnbench
