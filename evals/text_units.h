// Python's notions of characters and whitespace on UTF-8 text, as lm-eval's scoring uses them:
// len(str) (acc_norm's length) and str.rstrip() (the context/continuation boundary).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace attnbench::evals {

// True for the code points Python's str.isspace() accepts:
// bidirectional class WS, B or S, or category Zs.
bool is_python_space(char32_t cp);

// Python's len() of the decoded string: the number of Unicode code points. Throws
// std::invalid_argument on malformed UTF-8 (Python could not have decoded it either).
size_t codepoint_length(std::string_view utf8);

// Byte length of str.rstrip(): the text without its trailing Unicode whitespace.
size_t rstrip_length(std::string_view utf8);

}  // namespace attnbench::evals
