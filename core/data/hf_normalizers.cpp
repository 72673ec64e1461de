// tokenizer.json's "normalizer" (core/data/hf_pipeline.h): the tokenizers library's Prepend,
// Replace, NFC and Sequence normalizers. They run on each stretch of text between added tokens
// (AddedVocabulary::extract_and_normalize), before pre-tokenisation.
#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>
#include <unicode/stringpiece.h>

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/data/hf_pipeline.h"

namespace attnbench::data::hf {
namespace {

// Unicode NFC through ICU. The library uses the unicode-normalization-alignments crate; both
// implement the same stable algorithm, but each knows the decompositions of its own Unicode
// version (docs/tokenizer.md, "Hugging Face tokenizers").
std::string nfc(const std::string& text) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfc = icu::Normalizer2::getNFCInstance(status);
  std::string out;
  if (U_SUCCESS(status)) {
    icu::StringByteSink<std::string> sink(&out, static_cast<int32_t>(text.size()));
    nfc->normalizeUTF8(0, icu::StringPiece(text.data(), static_cast<int32_t>(text.size())), sink,
                       nullptr, status);
  }
  if (U_FAILURE(status)) {
    throw std::runtime_error(std::string("ICU NFC normalisation failed: ") + u_errorName(status));
  }
  return out;
}

}  // namespace

std::string replace_all(std::string_view text, std::string_view pattern, std::string_view content) {
  std::string out;
  size_t from = 0;
  for (size_t at; (at = text.find(pattern, from)) != std::string::npos; from = at + pattern.size())
    out.append(text.substr(from, at - from)).append(content);
  return out.append(text.substr(from));
}

Normalizer Normalizer::parse(const Json& spec, const Where& at) {
  Normalizer n;
  if (!spec.is_null()) n.add(spec, at);
  return n;
}

void Normalizer::add(const Json& spec, const Where& at) {
  const std::string type = type_of(spec, at);
  if (type == "Sequence") {
    const Json& list = member(spec, at, "normalizers");
    if (!list.is_array()) (at / "normalizers").fail("must be a list of normalizers");
    for (size_t i = 0; i < list.size(); ++i) add(list[i], (at / "normalizers")[i]);
  } else if (type == "Prepend") {
    steps_.push_back({Kind::Prepend, "", string_at(member(spec, at, "prepend"), at / "prepend")});
  } else if (type == "Replace") {
    const Json& pattern = member(spec, at, "pattern");
    if (!pattern.is_object() || !pattern.contains("String")) {
      unsupported(at / "pattern", pattern, "{\"String\": ...}");
    }
    std::string literal = string_at(pattern["String"], at / "pattern" / "String");
    if (literal.empty()) (at / "pattern" / "String").fail("must not be empty");
    steps_.push_back(
        {Kind::Replace, literal, string_at(member(spec, at, "content"), at / "content")});
  } else if (type == "NFC") {
    steps_.push_back({Kind::Nfc, "", ""});
  } else {
    unsupported(at / "type", type, "NFC, Prepend, Replace, Sequence");
  }
}

std::string Normalizer::apply(std::string text) const {
  for (const Step& s : steps_) {
    switch (s.kind) {
      case Kind::Prepend:  // the library prepends to non-empty text only
        if (!text.empty()) text.insert(0, s.content);
        break;
      case Kind::Replace:
        text = replace_all(text, s.pattern, s.content);
        break;
      case Kind::Nfc:
        text = nfc(text);
        break;
    }
  }
  return text;
}

}  // namespace attnbench::data::hf
