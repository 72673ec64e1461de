// Python str semantics that lm-eval's templates rely on, reproduced on UTF-8 std::string so that our
// prompt strings are byte-identical to the ones lm-eval builds (docs/tasks.md, "Conventions every
// task follows").
#pragma once
#include <cstdint>
#include <string>

namespace attnbench::evals {

// Python's str.isspace() / the `\s` class of `re` on str patterns (Py_UNICODE_ISSPACE):
// U+0009..U+000D, U+001C..U+001F, U+0020, U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029,
// U+202F, U+205F, U+3000.
bool py_isspace(char32_t c);

// str.strip() / str.lstrip() / str.rstrip() with no argument (Unicode whitespace as above).
std::string py_strip(const std::string& s);
std::string py_lstrip(const std::string& s);
std::string py_rstrip(const std::string& s);

// str.replace(from, to): every non-overlapping occurrence, scanning left to right.
std::string py_replace(const std::string& s, const std::string& from, const std::string& to);

// str.capitalize() for ASCII: first character upper-cased, every other ASCII letter lower-cased.
// Python also changes the case of non-ASCII letters (title-cases the first, lower-cases the rest);
// those bytes are left unchanged here (docs/tasks.md, HellaSwag).
std::string py_capitalize_ascii(const std::string& s);

// len(re.split(r"\s+", s)): the number of pieces between maximal runs of Unicode whitespace,
// counting the empty pieces a leading or trailing run produces (lm-eval's WikiText word count).
int64_t py_split_whitespace_count(const std::string& s);

// The next code point of UTF-8 text at byte `pos`, advancing `pos` past it; an invalid byte decodes
// as U+FFFD and advances one byte (never whitespace, so it never changes a strip or split).
char32_t next_code_point(const std::string& s, size_t& pos);

}  // namespace attnbench::evals
