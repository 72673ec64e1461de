// tokenizer.json's "pre_tokenizer" (core/data/hf_pipeline.h): the tokenizers library's ByteLevel,
// Split and Metaspace pre-tokenizers and their Sequence. Split's regexes are Oniguruma's (the
// library's SysRegex); they are rewritten into PCRE2's syntax and matched by
// core/data/pretokenizer.h.
#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/data/byte_unicode.h"
#include "core/data/hf_pipeline.h"
#include "core/data/pretokenizer.h"
#include "core/data/utf8.h"

namespace attnbench::data::hf {
namespace {

// Unicode White_Space, as a class body: Oniguruma's \s in UTF-8 mode (Zs, Zl, Zp, U+0009-000D,
// U+0085) is this set; PCRE2's \s would add U+180E (core/data/pretokenizer.h).
constexpr const char* kWhiteSpace =
    "\\t\\n\\x{0B}\\f\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}"
    "\\x{202F}\\x{205F}\\x{3000}";
// Oniguruma's \w in UTF-8 mode: Letter, Mark, Number, Connector_Punctuation (PCRE2's, with UCP, is
// Letter, Number and the underscore). Its \d is \p{Nd}, as PCRE2's.
constexpr const char* kWord = "\\p{L}\\p{M}\\p{N}\\p{Pc}";

// Oniguruma -> PCRE2, construct by construct. What the two engines read alike is copied; \s \S
// \w \W \d \D are spelled out as Oniguruma means them; constructs that mean different things in
// the two (\h is a hex digit in Oniguruma's Ruby syntax, {n,m}+, nested classes, ^ $ .) or that
// no supported tokenizer uses are refused, never guessed.
class OnigToPcre2 {
 public:
  OnigToPcre2(std::string_view pattern, const Where& at) : p_(pattern), at_(at) {}

  std::string translate() {
    std::string out;
    while (i_ < p_.size()) {
      char c = p_[i_];
      if (c == '\\') {
        out += escape(false);
      } else if (c == '[') {
        out += char_class();
      } else if (c == '(') {
        out += group();
      } else if (c == '{') {
        out += interval();
      } else if (c == '.' || c == '^' || c == '$') {
        refuse(i_, std::string("'") + c + "'");
      } else {
        out += c;
        ++i_;
      }
    }
    return out;
  }

 private:
  [[noreturn]] void refuse(size_t offset, const std::string& what) const {
    at_.fail("\"" + std::string(p_) + "\": " + what + " (offset " + std::to_string(offset) +
             ") is not supported (Oniguruma and PCRE2 read it differently, or no supported "
             "tokenizer uses it)");
  }

  bool at(size_t k, char c) const { return k < p_.size() && p_[k] == c; }

  std::string escape(bool in_class) {
    const size_t start = i_;
    if (start + 1 >= p_.size()) refuse(start, "a trailing backslash");
    const char e = p_[start + 1];
    i_ += 2;
    switch (e) {
      case 's':
        return in_class ? kWhiteSpace : std::string("[") + kWhiteSpace + "]";
      case 'S':
        if (in_class) refuse(start, "\\S inside a character class");
        return std::string("[^") + kWhiteSpace + "]";
      case 'w':
        return in_class ? kWord : std::string("[") + kWord + "]";
      case 'W':
        if (in_class) refuse(start, "\\W inside a character class");
        return std::string("[^") + kWord + "]";
      case 'd':
        return "\\p{Nd}";
      case 'D':
        return "\\P{Nd}";
      case 'p':
      case 'P':
        return std::string("\\") + e + braced(start, "property name");
      case 'x':
        return "\\x" + (at(i_, '{') ? braced(start, "code point") : hex_digits(2, false));
      case 'u':  // Oniguruma's \uHHHH
        return "\\x{" + hex_digits(4, true) + "}";
      case 'r':
      case 'n':
      case 't':
      case 'f':
        return std::string("\\") + e;
      default:
        break;
    }
    if (std::isalnum(static_cast<unsigned char>(e))) refuse(start, std::string("\\") + e);
    // An escaped punctuation or non-ASCII character is that character in both engines.
    size_t len = std::max<size_t>(1, utf8_sequence_length(p_.substr(start + 1)));
    i_ = start + 1 + len;
    return "\\" + std::string(p_.substr(start + 1, len));
  }

  // "{...}" at i_ (a \p property or a \x code point), copied.
  std::string braced(size_t start, const char* what) {
    size_t close = p_.find('}', i_);
    if (!at(i_, '{') || close == std::string_view::npos || close == i_ + 1) {
      refuse(start, std::string("a ") + what + " not written {...}");
    }
    for (size_t k = i_ + 1; k < close; ++k) {
      auto ch = static_cast<unsigned char>(p_[k]);
      if (!std::isalnum(ch) && ch != '_' && ch != '^') refuse(start, std::string("this ") + what);
    }
    std::string out(p_.substr(i_, close + 1 - i_));
    i_ = close + 1;
    return out;
  }

  std::string hex_digits(size_t count, bool exact) {
    size_t n = 0;
    while (n < count && i_ + n < p_.size() && std::isxdigit(static_cast<unsigned char>(p_[i_ + n])))
      ++n;
    if (n == 0 || (exact && n < count)) refuse(i_, "a malformed hexadecimal escape");
    std::string out(p_.substr(i_, n));
    i_ += n;
    return out;
  }

  std::string char_class() {
    const size_t start = i_++;
    std::string out = "[";
    if (at(i_, '^')) out += '^', ++i_;
    if (at(i_, ']')) refuse(i_, "']' first in a character class (write \\])");
    while (true) {
      if (i_ >= p_.size()) refuse(start, "an unterminated character class");
      const char c = p_[i_];
      if (c == ']') {
        ++i_;
        return out + "]";
      }
      if (c == '\\') {
        out += escape(true);
        continue;
      }
      if (c == '[') refuse(i_, "a nested class or POSIX bracket inside a character class");
      if (c == '&' && at(i_ + 1, '&')) refuse(i_, "a class intersection &&");
      out += c;
      ++i_;
    }
  }

  std::string group() {
    if (!at(i_ + 1, '?')) {
      ++i_;
      return "(";
    }
    for (const char* g : {"(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>"}) {
      if (p_.substr(i_, std::strlen(g)) == g) {
        i_ += std::strlen(g);
        return g;
      }
    }
    size_t k = i_ + 2;  // inline flags: only i (case-insensitive), on or off
    while (at(k, 'i') || at(k, '-')) ++k;
    if (k == i_ + 2 || !(at(k, ':') || at(k, ')'))) refuse(i_, "this kind of group");
    std::string out(p_.substr(i_, k + 1 - i_));
    i_ = k + 1;
    return out;
  }

  // {n}, {n,} or {n,m}. Oniguruma reads {n,m}+ as a repetition of {n,m}, PCRE2 as possessive.
  std::string interval() {
    const size_t start = i_, close = p_.find('}', i_);
    std::string_view body =
        close == std::string_view::npos ? "" : p_.substr(start + 1, close - start - 1);
    size_t comma = body.find(',');
    auto digits = [](std::string_view s) {
      return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    bool ok = !body.empty() && body[0] != ',' && digits(body.substr(0, comma)) &&
              (comma == std::string_view::npos || digits(body.substr(comma + 1)));
    if (!ok) refuse(start, "a '{' that is not an interval {n}, {n,} or {n,m} (write \\{)");
    if (at(close + 1, '+')) refuse(start, "an interval followed by '+'");
    i_ = close + 1;
    return std::string(p_.substr(start, close + 1 - start));
  }

  std::string_view p_;
  const Where& at_;
  size_t i_ = 0;
};

void emit(std::vector<Piece>& out, std::string_view text, bool at_start) {
  if (!text.empty()) out.push_back({std::string(text), at_start});  // the library drops empty ones
}

}  // namespace

struct PreTokenizer::Step {
  virtual ~Step() = default;
  virtual void apply(Piece piece, std::vector<Piece>& out) const = 0;
};

namespace {

// ByteLevel: an optional leading space, GPT-2's pattern (use_regex), then every byte spelled as
// its GPT-2 code point (core/data/byte_unicode.h), which the vocabulary is written in.
class ByteLevelStep : public PreTokenizer::Step {
 public:
  ByteLevelStep(bool add_prefix_space, bool use_regex)
      : add_prefix_space_(add_prefix_space),
        gpt2_(use_regex ? std::make_unique<Pretokenizer>() : nullptr) {
    for (int b = 0; b < 256; ++b) {
      uint32_t cp = byte_to_codepoint(static_cast<uint8_t>(b));  // < U+0200: one or two bytes
      spelled_[b] = cp < 0x80 ? std::string(1, static_cast<char>(cp))
                              : std::string{static_cast<char>(0xC0 | (cp >> 6)),
                                            static_cast<char>(0x80 | (cp & 0x3F))};
    }
  }

  void apply(Piece piece, std::vector<Piece>& out) const override {
    if (add_prefix_space_ && piece.text[0] != ' ') piece.text.insert(0, " ");
    auto spell = [&](std::string_view part, bool at_start) {
      std::string s;
      for (unsigned char b : part) s += spelled_[b];
      out.push_back({std::move(s), at_start});
    };
    if (!gpt2_) return spell(piece.text, piece.at_start);
    gpt2_->split(piece.text, [&](std::string_view part) {
      spell(part, piece.at_start && part.data() == piece.text.data());
    });
  }

 private:
  bool add_prefix_space_;
  std::unique_ptr<Pretokenizer> gpt2_;
  std::array<std::string, 256> spelled_;
};

// Split with behavior Isolated (matches and the text between them are pieces) or Removed (only
// the text between matches is).
class SplitStep : public PreTokenizer::Step {
 public:
  SplitStep(std::unique_ptr<Pretokenizer> regex, std::string literal, bool remove, Where where)
      : regex_(std::move(regex)), literal_(std::move(literal)), remove_(remove),
        where_(std::move(where)) {}

  void apply(Piece piece, std::vector<Piece>& out) const override {
    std::string_view text = piece.text;
    size_t done = 0;
    auto on_match = [&](size_t start, size_t end) {
      emit(out, text.substr(done, start - done), piece.at_start && done == 0);
      if (!remove_) emit(out, text.substr(start, end - start), piece.at_start && start == 0);
      done = end;
    };
    if (regex_) {
      try {
        regex_->find(text, on_match);
      } catch (const std::runtime_error& e) {  // PCRE2 gave up (its match or depth limit)
        where_.fail(std::string("cannot be matched on this text: ") + e.what());
      }
    } else {
      for (size_t at; (at = text.find(literal_, done)) != std::string_view::npos;)
        on_match(at, at + literal_.size());
    }
    emit(out, text.substr(done), piece.at_start && done == 0);
  }

 private:
  std::unique_ptr<Pretokenizer> regex_;  // or, for a String pattern, literal_
  std::string literal_;
  bool remove_;
  Where where_;  // the pattern in tokenizer.json, named when matching fails
};

// Metaspace: spaces become the replacement character, which is prepended per prepend_scheme;
// with split, every replacement character starts a new piece (MergedWithNext).
class MetaspaceStep : public PreTokenizer::Step {
 public:
  enum class Prepend { Always, First, Never };
  MetaspaceStep(std::string replacement, Prepend prepend, bool split)
      : rep_(std::move(replacement)), prepend_(prepend), split_(split) {}

  void apply(Piece piece, std::vector<Piece>& out) const override {
    std::string text = replace_all(piece.text, " ", rep_);
    bool prepend = prepend_ == Prepend::Always || (prepend_ == Prepend::First && piece.at_start);
    if (prepend && text.compare(0, rep_.size(), rep_) != 0) text.insert(0, rep_);
    if (!split_) return emit(out, text, piece.at_start);
    size_t begin = 0;
    for (size_t at = text.find(rep_, 1); at != std::string::npos; at = text.find(rep_, at + 1)) {
      emit(out, std::string_view(text).substr(begin, at - begin), piece.at_start && begin == 0);
      begin = at;
    }
    emit(out, std::string_view(text).substr(begin), piece.at_start && begin == 0);
  }

 private:
  std::string rep_;
  Prepend prepend_;
  bool split_;
};

std::unique_ptr<PreTokenizer::Step> split_step(const Json& spec, const Where& at) {
  const Json& pattern = member(spec, at, "pattern");
  const std::string behavior = string_at(member(spec, at, "behavior"), at / "behavior");
  if (behavior != "Isolated" && behavior != "Removed") {
    unsupported(at / "behavior", behavior, "Isolated, Removed");
  }
  if (bool_member(spec, at, "invert", false)) unsupported(at / "invert", true, "false");
  if (pattern.is_object() && pattern.size() == 1 && pattern.contains("String")) {
    std::string literal = string_at(pattern["String"], at / "pattern" / "String");
    if (literal.empty()) (at / "pattern" / "String").fail("must not be empty");
    return std::make_unique<SplitStep>(nullptr, std::move(literal), behavior == "Removed",
                                       at / "pattern" / "String");
  }
  if (!pattern.is_object() || pattern.size() != 1 || !pattern.contains("Regex")) {
    unsupported(at / "pattern", pattern, "{\"Regex\": ...}, {\"String\": ...}");
  }
  const Where where = at / "pattern" / "Regex";
  std::string translated = OnigToPcre2(string_at(pattern["Regex"], where), where).translate();
  try {
    return std::make_unique<SplitStep>(std::make_unique<Pretokenizer>(translated), "",
                                       behavior == "Removed", where);
  } catch (const std::runtime_error& e) {
    where.fail(std::string("is refused: ") + e.what());
  }
}

std::unique_ptr<PreTokenizer::Step> metaspace_step(const Json& spec, const Where& at) {
  std::string rep = string_at(member(spec, at, "replacement"), at / "replacement");
  if (rep.empty() || utf8_sequence_length(rep) != rep.size()) {
    (at / "replacement").fail("must be one character");
  }
  const std::string scheme = prepend_scheme(spec, at);
  using P = MetaspaceStep::Prepend;
  P prepend = scheme == "always" ? P::Always : scheme == "first" ? P::First : P::Never;
  return std::make_unique<MetaspaceStep>(rep, prepend, bool_member(spec, at, "split", true));
}

}  // namespace

std::string prepend_scheme(const Json& metaspace, const Where& at) {
  const Json& value = member(metaspace, at, "prepend_scheme");
  std::string scheme = value.is_null() ? "always" : string_at(value, at / "prepend_scheme");
  if (scheme != "always" && scheme != "first" && scheme != "never") {
    unsupported(at / "prepend_scheme", scheme, "always, first, never");
  }
  if (!bool_member(metaspace, at, "add_prefix_space", true) && scheme != "never") {
    (at / "add_prefix_space").fail("false contradicts prepend_scheme \"" + scheme + "\"");
  }
  return scheme;
}

PreTokenizer PreTokenizer::parse(const Json& spec, const Where& at) {
  PreTokenizer p;
  if (!spec.is_null()) p.add(spec, at);
  return p;
}

void PreTokenizer::add(const Json& spec, const Where& at) {
  const std::string type = type_of(spec, at);
  if (type == "Sequence") {
    const Json& list = member(spec, at, "pretokenizers");
    if (!list.is_array()) (at / "pretokenizers").fail("must be a list of pre-tokenizers");
    for (size_t i = 0; i < list.size(); ++i) add(list[i], (at / "pretokenizers")[i]);
  } else if (type == "ByteLevel") {  // the library's defaults: true, true, true
    steps_.push_back(std::make_shared<ByteLevelStep>(
        bool_member(spec, at, "add_prefix_space", true), bool_member(spec, at, "use_regex", true)));
  } else if (type == "Split") {
    steps_.push_back(split_step(spec, at));
  } else if (type == "Metaspace") {
    steps_.push_back(metaspace_step(spec, at));
  } else {
    unsupported(at / "type", type, "ByteLevel, Metaspace, Sequence, Split");
  }
}

std::vector<Piece> PreTokenizer::apply(Piece segment) const {
  std::vector<Piece> pieces, next;
  if (!segment.text.empty()) pieces.push_back(std::move(segment));
  for (const auto& step : steps_) {
    next.clear();
    for (Piece& p : pieces) step->apply(std::move(p), next);
    pieces.swap(next);
  }
  return pieces;
}

}  // namespace attnbench::data::hf
