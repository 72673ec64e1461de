// tokenizer.json's "decoder" (core/data/hf_pipeline.h): the tokenizers library's decoders turn
// the list of token strings into text, each stage mapping the list to a new list (decode_chain);
// the result is the concatenation of the last list.
#include <cctype>
#include <string>

#include <nlohmann/json.hpp>

#include "core/data/byte_unicode.h"
#include "core/data/hf_pipeline.h"
#include "core/data/utf8.h"

namespace attnbench::data::hf {
namespace {

// ByteLevel: each token's characters back to the bytes they spell (a token holding a character
// outside the table, such as an added token with a space, stays as it is), all joined, then read
// as lossy UTF-8.
std::vector<std::string> byte_level(const std::vector<std::string>& tokens) {
  std::string bytes;
  for (const std::string& t : tokens) {
    auto raw = unicode_to_bytes(t);
    bytes += raw ? *raw : t;
  }
  return {utf8_lossy(bytes)};
}

// ByteFallback: runs of <0xXX> tokens become the text of their bytes, or one U+FFFD per byte when
// the run is not valid UTF-8 as a whole.
std::vector<std::string> byte_fallback(const std::vector<std::string>& tokens) {
  std::vector<std::string> out;
  std::string run;
  size_t run_tokens = 0;
  auto flush = [&] {
    if (run_tokens == 0) return;
    if (utf8_valid_prefix(run) == run.size()) {
      out.push_back(run);
    } else {
      for (size_t k = 0; k < run_tokens; ++k) out.push_back(kReplacementCharacter);
    }
    run.clear(), run_tokens = 0;
  };
  for (const std::string& t : tokens) {
    bool is_byte = t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>' &&
                   std::isxdigit(static_cast<unsigned char>(t[3])) &&
                   std::isxdigit(static_cast<unsigned char>(t[4]));
    if (is_byte) {
      run.push_back(static_cast<char>(std::stoi(t.substr(3, 2), nullptr, 16)));
      ++run_tokens;
    } else {
      flush();
      out.push_back(t);
    }
  }
  flush();
  return out;
}

// Strip: up to `start` leading and `stop` trailing copies of the character off each token. The
// library indexes past the front of a short token when stop exceeds its length; this stops there.
std::string strip(const std::string& token, const std::string& ch, size_t start, size_t stop) {
  size_t begin = 0, end = token.size();
  for (size_t k = 0; k < start && token.compare(begin, ch.size(), ch) == 0; ++k) begin += ch.size();
  for (size_t k = 0; k < stop && end >= begin + ch.size() &&
                     token.compare(end - ch.size(), ch.size(), ch) == 0;
       ++k)
    end -= ch.size();
  return token.substr(begin, end - begin);
}

std::string one_character(const Json& spec, const Where& at, const char* key) {
  std::string s = string_at(member(spec, at, key), at / key);
  if (s.empty() || utf8_sequence_length(s) != s.size()) (at / key).fail("must be one character");
  return s;
}

size_t count(const Json& spec, const Where& at, const char* key) {
  const Json& v = member(spec, at, key);
  if (!v.is_number_unsigned()) (at / key).fail("must be a non-negative integer");
  return v.get<size_t>();
}

}  // namespace

Decoder Decoder::parse(const Json& spec, const Where& at) {
  Decoder d;
  if (spec.is_null()) {
    d.none_ = true;
  } else {
    d.add(spec, at);
  }
  return d;
}

void Decoder::add(const Json& spec, const Where& at) {
  auto step = [](Kind kind, std::string from = "", std::string to = "") {
    Step s;
    s.kind = kind, s.from = std::move(from), s.to = std::move(to);
    return s;
  };
  const std::string type = type_of(spec, at);
  if (type == "Sequence") {
    const Json& list = member(spec, at, "decoders");
    if (!list.is_array()) (at / "decoders").fail("must be a list of decoders");
    for (size_t i = 0; i < list.size(); ++i) add(list[i], (at / "decoders")[i]);
  } else if (type == "ByteLevel" || type == "ByteFallback" || type == "Fuse") {
    steps_.push_back(step(type == "ByteLevel" ? Kind::ByteLevel
                          : type == "Fuse"    ? Kind::Fuse
                                              : Kind::ByteFallback));
  } else if (type == "Metaspace") {
    Step s = step(Kind::Metaspace, one_character(spec, at, "replacement"), " ");
    s.drop_first = prepend_scheme(spec, at) != "never";
    steps_.push_back(s);
  } else if (type == "Replace") {
    const Json& pattern = member(spec, at, "pattern");
    if (!pattern.is_object() || !pattern.contains("String")) {
      unsupported(at / "pattern", pattern, "{\"String\": ...}");
    }
    std::string from = string_at(pattern["String"], at / "pattern" / "String");
    if (from.empty()) (at / "pattern" / "String").fail("must not be empty");
    steps_.push_back(
        step(Kind::Replace, from, string_at(member(spec, at, "content"), at / "content")));
  } else if (type == "Strip") {
    Step s = step(Kind::Strip, one_character(spec, at, "content"));
    s.start = count(spec, at, "start"), s.stop = count(spec, at, "stop");
    steps_.push_back(s);
  } else {
    unsupported(at / "type", type,
                "ByteFallback, ByteLevel, Fuse, Metaspace, Replace, Sequence, Strip");
  }
}

std::string Decoder::decode(std::vector<std::string> tokens) const {
  std::string text;
  if (none_) {
    for (size_t i = 0; i < tokens.size(); ++i) text += (i ? " " : "") + tokens[i];
    return text;
  }
  for (const Step& s : steps_) {
    switch (s.kind) {
      case Kind::ByteLevel:
        tokens = byte_level(tokens);
        break;
      case Kind::ByteFallback:
        tokens = byte_fallback(tokens);
        break;
      case Kind::Fuse:
        for (size_t i = 1; i < tokens.size(); ++i) tokens[0] += tokens[i];
        tokens.resize(std::min<size_t>(tokens.size(), 1));
        break;
      case Kind::Metaspace:  // the first token's replacements vanish unless prepend_scheme never
        for (size_t i = 0; i < tokens.size(); ++i)
          tokens[i] = replace_all(tokens[i], s.from, i == 0 && s.drop_first ? "" : s.to);
        break;
      case Kind::Replace:
        for (std::string& t : tokens) t = replace_all(t, s.from, s.to);
        break;
      case Kind::Strip:
        for (std::string& t : tokens) t = strip(t, s.from, s.start, s.stop);
        break;
    }
  }
  for (const std::string& t : tokens) text += t;
  return text;
}

}  // namespace attnbench::data::hf
