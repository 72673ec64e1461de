// Loading a tokenizer.json and running its pipeline (core/data/hf_tokenizer.h). The order is the
// tokenizers library's TokenizerImpl::encode_single_sequence: added tokens with normalized=false
// are cut out of the raw text, each stretch between them is normalised, added tokens with
// normalized=true are cut out of that, and each remaining stretch is pre-tokenised into pieces
// that the model encodes one by one.
#include "core/data/hf_tokenizer.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/common/json_input.h"
#include "core/common/regular_file.h"
#include "core/data/hf_pipeline.h"
#include "core/data/utf8.h"

namespace attnbench::data {

namespace fs = std::filesystem;

namespace hf {

namespace {
std::string describe(const Json& v) {  // a value as messages show it
  return v.is_structured() ? std::string("a JSON ") + v.type_name() : v.dump();
}
}  // namespace

Where Where::operator/(std::string_view key) const {
  return Where(file_, path_.empty() ? std::string(key) : path_ + "." + std::string(key));
}

Where Where::operator[](size_t index) const {
  return Where(file_, path_ + "[" + std::to_string(index) + "]");
}

void Where::fail(const std::string& what) const {
  throw InputError({file_, 0, 0}, path_.empty() ? what : path_ + " " + what);
}

const Json& member(const Json& obj, const Where& at, const char* key) {
  static const Json null;
  if (!obj.is_object()) at.fail("must be a JSON object (found " + describe(obj) + ")");
  auto it = obj.find(key);
  return it == obj.end() ? null : *it;
}

std::string string_at(const Json& value, const Where& at) {
  if (!value.is_string()) at.fail("must be a string (found " + describe(value) + ")");
  return value.get<std::string>();
}

bool bool_member(const Json& obj, const Where& at, const char* key, bool fallback) {
  const Json& v = member(obj, at, key);
  if (v.is_null()) return fallback;
  if (!v.is_boolean()) (at / key).fail("must be true or false (found " + describe(v) + ")");
  return v.get<bool>();
}

std::string type_of(const Json& obj, const Where& at) {
  return string_at(member(obj, at, "type"), at / "type");
}

void unsupported(const Where& at, const Json& value, const std::string& supported) {
  at.fail(describe(value) + " is not supported (supported: " + supported + ")");
}

}  // namespace hf

namespace {

using hf::Json;
using hf::Where;

Json read_json(const fs::path& path) {
  std::string text;
  try {
    text = read_regular_file(path, "tokenizer file");
  } catch (const InputError&) {
    throw;
  } catch (const UsageError& e) {
    throw UsageError(std::string(e.what()) + " (expected a Hugging Face tokenizer folder: " +
                     "tokenizer.json, and optionally tokenizer_config.json)");
  }
  // Bounded before the pipeline walks it (a Sequence nested 100,000 deep would overflow the stack
  // of the recursive readers): the depth, a key given twice, and nlohmann's reason in one line.
  return parse_json_input(text, path, "the file");
}

// TemplateProcessing's single template: the ids of the special tokens ahead of $A. Tokens after
// the text are refused.
std::vector<uint32_t> template_processing_prefix(const Json& spec, const Where& at) {
  const Json& single = hf::member(spec, at, "single");
  if (!single.is_array()) (at / "single").fail("must be a list of template pieces");
  std::vector<uint32_t> prefix;
  for (size_t i = 0; i < single.size(); ++i) {
    const Where where = (at / "single")[i];
    if (single[i].is_object() && single[i].contains("Sequence")) {
      if (i + 1 != single.size()) where.fail("is followed by tokens after the text: not supported");
      return prefix;
    }
    const Json& special = hf::member(single[i], where, "SpecialToken");
    const std::string name = hf::string_at(hf::member(special, where / "SpecialToken", "id"),
                                           where / "SpecialToken" / "id");
    const Where entry = at / "special_tokens" / name;
    const Json& ids = hf::member(
        hf::member(hf::member(spec, at, "special_tokens"), at / "special_tokens", name.c_str()),
        entry, "ids");
    if (!ids.is_array()) (entry / "ids").fail("must be a list of token ids");
    for (const Json& id : ids) {
      if (!id.is_number_unsigned() || id.get<uint64_t>() > hf::BpeModel::kMaxId)
        (entry / "ids").fail("holds " + id.dump() + ", which is not a token id");
      prefix.push_back(id.get<uint32_t>());
    }
  }
  (at / "single").fail("has no {\"Sequence\": {\"id\": \"A\"}}");
}

// What encode(text, add_special_tokens=True) puts before the text. ByteLevel adds nothing; a
// Sequence applies its processors in turn, each putting its tokens in front.
std::vector<uint32_t> template_prefix(const Json& spec, const Where& at) {
  if (spec.is_null()) return {};
  const std::string type = hf::type_of(spec, at);
  if (type == "TemplateProcessing") return template_processing_prefix(spec, at);
  std::vector<uint32_t> prefix;
  if (type == "Sequence") {
    const Json& list = hf::member(spec, at, "processors");
    if (!list.is_array()) (at / "processors").fail("must be a list of post-processors");
    for (size_t i = 0; i < list.size(); ++i) {
      std::vector<uint32_t> outer = template_prefix(list[i], (at / "processors")[i]);
      prefix.insert(prefix.begin(), outer.begin(), outer.end());
    }
  } else if (type != "ByteLevel") {
    hf::unsupported(at / "type", type, "ByteLevel, Sequence, TemplateProcessing");
  }
  return prefix;
}

// tokenizer_config.json's bos_token / eos_token: a string, an AddedToken object or null.
std::optional<std::string> config_token(const Json& config, const Where& at, const char* key) {
  const Json& v = hf::member(config, at, key);
  if (v.is_null()) return std::nullopt;
  if (v.is_object()) return hf::string_at(hf::member(v, at / key, "content"), at / key / "content");
  return hf::string_at(v, at / key);
}

}  // namespace

struct HFTokenizer::Impl {
  hf::Normalizer normalizer;
  hf::PreTokenizer pre_tokenizer;
  hf::BpeModel model;
  hf::Decoder decoder;
  hf::AddedVocabulary added;
  std::optional<uint32_t> bos, eos;
  bool adds_bos = false;
  size_t vocab_size = 0;

  void load_bos_eos(std::vector<uint32_t> prefix, const fs::path& config_path);
  std::optional<uint32_t> token_id(const std::string& content) const {  // as token_to_id
    auto id = added.id(content);
    return id ? id : model.id(content);
  }

  // One stretch of the raw text between added tokens.
  void encode_text(std::string_view text, bool at_start, std::vector<uint32_t>& out) const {
    const std::string normalized = normalizer.apply(std::string(text));
    for (const auto& segment : added.split(normalized, at_start, true)) {
      if (segment.token) {
        out.push_back(segment.token->id);
        continue;
      }
      for (const hf::Piece& p : pre_tokenizer.apply({std::string(segment.text), segment.at_start}))
        model.encode(p.text, out);
    }
  }
};

// BOS and EOS (docs/tokenizer.md, "BOS"). lm-eval 0.4.13 with add_bos_token unset calls
// tokenizer.encode(text), i.e. add_special_tokens=True: the BOS is whatever the post-processor
// puts first. transformers 5 ignores tokenizer_config.json's add_bos_token when tokenizer.json
// exists; transformers 4's Llama-style classes obey it instead. A config that disagrees with the
// post-processor is refused rather than read one way or the other.
void HFTokenizer::Impl::load_bos_eos(std::vector<uint32_t> prefix, const fs::path& path) {
  const Json config = fs::exists(path) ? read_json(path) : Json::object();
  const Where at(path.string());
  auto id_of = [&](const char* key) -> std::optional<uint32_t> {
    std::optional<std::string> content = config_token(config, at, key);
    if (!content) return std::nullopt;
    std::optional<uint32_t> id = token_id(*content);
    if (!id) (at / key).fail("\"" + *content + "\" is not a token of tokenizer.json");
    return id;
  };
  bos = id_of("bos_token");
  eos = id_of("eos_token");
  adds_bos = !prefix.empty();
  if (adds_bos && !bos) bos = prefix[0];
  if (adds_bos && *bos != prefix[0]) {
    (at / "bos_token").fail("is token " + std::to_string(*bos) + " but tokenizer.json's " +
                            "post_processor puts token " + std::to_string(prefix[0]) + " first");
  }
  if (!hf::member(config, at, "add_bos_token").is_null() &&
      hf::bool_member(config, at, "add_bos_token", false) != adds_bos) {
    (at / "add_bos_token").fail(std::string("is ") + (adds_bos ? "false" : "true") +
                                " but tokenizer.json's post_processor " +
                                (adds_bos ? "adds" : "adds no") + " BOS: transformers 4 and 5 "
                                "would encode differently; make the two agree");
  }
}

HFTokenizer HFTokenizer::load(const fs::path& dir) {
  const fs::path path = dir / "tokenizer.json";
  const Json spec = read_json(path);
  const Where top(path.string());
  const Json& version = hf::member(spec, top, "version");
  if (!version.is_null() && version != "1.0") hf::unsupported(top / "version", version, "\"1.0\"");
  // truncation and padding are ignored: transformers' encode without truncation turns them off.
  auto impl = std::make_shared<Impl>();
  auto part = [&](const char* key) -> const Json& { return hf::member(spec, top, key); };
  impl->normalizer = hf::Normalizer::parse(part("normalizer"), top / "normalizer");
  impl->pre_tokenizer = hf::PreTokenizer::parse(part("pre_tokenizer"), top / "pre_tokenizer");
  impl->model = hf::BpeModel::parse(part("model"), top / "model");
  impl->decoder = hf::Decoder::parse(part("decoder"), top / "decoder");
  impl->added = hf::AddedVocabulary::parse(part("added_tokens"), top / "added_tokens", impl->model,
                                           impl->normalizer);
  std::vector<uint32_t> prefix = template_prefix(part("post_processor"), top / "post_processor");
  if (prefix.size() > 1) {
    (top / "post_processor").fail("puts " + std::to_string(prefix.size()) + " tokens before the " +
                                  "text: only a single BOS is supported");
  }
  impl->load_bos_eos(std::move(prefix), dir / "tokenizer_config.json");
  impl->vocab_size = std::max(impl->model.end_id(), impl->added.end_id());
  HFTokenizer tokenizer;
  tokenizer.impl_ = std::move(impl);
  return tokenizer;
}

std::vector<uint32_t> HFTokenizer::encode(std::string_view text) const {
  const size_t valid = utf8_valid_prefix(text);
  if (valid != text.size()) {
    throw UsageError("text is not valid UTF-8 (byte " + std::to_string(valid) + "): Hugging Face " +
                     "tokenizers encode Unicode text only");
  }
  std::vector<uint32_t> out;
  for (const auto& segment : impl_->added.split(text, true, false)) {
    if (segment.token) {
      out.push_back(segment.token->id);
    } else {
      impl_->encode_text(segment.text, segment.at_start, out);
    }
  }
  return out;
}

std::string HFTokenizer::decode(const std::vector<uint32_t>& ids) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (uint32_t id : ids) {
    if (const auto* added = impl_->added.find(id)) {
      tokens.push_back(added->spelled);
    } else if (const std::string* token = impl_->model.token(id)) {
      tokens.push_back(*token);
    }
    // An id no token has decodes to nothing, as the library's decode skips it (a model's
    // vocabulary padded past its tokenizer's, as Pythia's, can generate one).
  }
  return impl_->decoder.decode(std::move(tokens));
}

size_t HFTokenizer::vocab_size() const { return impl_->vocab_size; }

bool HFTokenizer::is_special(uint32_t id) const {
  const auto* added = impl_->added.find(id);
  return added && added->special;
}

std::optional<uint32_t> HFTokenizer::bos_id() const { return impl_->bos; }
std::optional<uint32_t> HFTokenizer::eos_id() const { return impl_->eos; }
bool HFTokenizer::adds_bos() const { return impl_->adds_bos; }

}  // namespace attnbench::data
