// tokenizer.json's "added_tokens" (core/data/hf_pipeline.h), as the tokenizers library's
// AddedVocabulary reads and finds them: special tokens and the like are cut out of the text
// before the normalizer / pre-tokenizer / model see it, each becoming its id.
#include <algorithm>
#include <functional>

#include <nlohmann/json.hpp>

#include "core/data/hf_pipeline.h"
#include "core/data/utf8.h"

namespace attnbench::data::hf {
namespace {

// Unicode White_Space: Rust's \s, which the library's lstrip / rstrip patterns use.
bool is_white_space(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

uint32_t code_point(std::string_view seq) {  // one well-formed UTF-8 sequence
  auto lead = static_cast<unsigned char>(seq[0]);
  uint32_t cp = seq.size() == 1 ? lead : lead & (0x7Fu >> seq.size());
  for (size_t k = 1; k < seq.size(); ++k)
    cp = cp << 6 | (static_cast<unsigned char>(seq[k]) & 0x3F);
  return cp;
}

// Where the white space that ends text[0, end) begins (the library's \s*$).
size_t white_space_before(std::string_view text, size_t end) {
  while (end > 0) {
    size_t begin = end - 1;
    while (begin > 0 && (static_cast<unsigned char>(text[begin]) & 0xC0) == 0x80) --begin;
    if (!is_white_space(code_point(text.substr(begin, end - begin)))) break;
    end = begin;
  }
  return end;
}

// Where the white space that starts text[begin, ...) ends (the library's ^\s*).
size_t white_space_after(std::string_view text, size_t begin) {
  while (begin < text.size()) {
    size_t len = utf8_sequence_length(text.substr(begin));
    if (!is_white_space(code_point(text.substr(begin, len)))) break;
    begin += len;
  }
  return begin;
}

uint8_t first_byte(std::string_view s) { return static_cast<uint8_t>(s[0]); }

bool flag(const Json& token, const Where& at, const char* key) {  // the library requires each
  if (!member(token, at, key).is_boolean()) (at / key).fail("must be true or false");
  return token[key].get<bool>();
}

}  // namespace

// Ids as the library assigns them (AddedVocabulary::add_tokens): a token of the model's vocabulary
// has its id there, the others are numbered from the vocabulary's size in file order. The
// library only warns when the file states other ids; here the file is refused.
AddedVocabulary AddedVocabulary::parse(const Json& list, const Where& at, const BpeModel& model,
                                       const Normalizer& normalizer) {
  AddedVocabulary v;
  if (list.is_null()) return v;
  if (!list.is_array()) at.fail("must be a list of added tokens");
  auto next = static_cast<uint32_t>(model.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const Where where = at[i];
    const Json& t = list[i];
    std::string content = string_at(member(t, where, "content"), where / "content");
    if (content.empty() || v.id(content)) {
      (where / "content").fail("\"" + content + "\" is empty or listed twice");
    }
    if (flag(t, where, "single_word")) unsupported(where / "single_word", true, "false");
    const uint32_t id = model.id(content).value_or(next);
    if (id == next) ++next;
    const Json& stated = member(t, where, "id");
    if (!stated.is_number_unsigned() || stated.get<uint64_t>() != id) {
      (where / "id").fail("is " + stated.dump() + " but the tokenizers library gives \"" + content +
                          "\" the id " + std::to_string(id));
    }
    const bool normalized = flag(t, where, "normalized");
    std::string spelled = normalized ? normalizer.apply(content) : content;
    if (spelled.empty()) (where / "content").fail("is normalised to nothing");
    v.by_id_.emplace(id, v.tokens_.size());
    v.by_content_.emplace(content, v.tokens_.size());
    Index& index = normalized ? v.normalized_ : v.raw_;
    if (index.by_spelling.emplace(spelled, v.tokens_.size()).second) {
      index.lengths[first_byte(spelled)].push_back(spelled.size());
    }
    v.tokens_.push_back({id, content, spelled, flag(t, where, "lstrip"), flag(t, where, "rstrip"),
                         normalized, flag(t, where, "special")});
  }
  for (Index* index : {&v.raw_, &v.normalized_}) {
    for (std::vector<size_t>& lengths : index->lengths) {  // longest first: the first found wins
      std::sort(lengths.begin(), lengths.end(), std::greater<>());
      lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
    }
  }
  return v;
}

const AddedVocabulary::Token* AddedVocabulary::longest_at(std::string_view text, size_t pos,
                                                          bool normalized) const {
  const Index& index = normalized ? normalized_ : raw_;
  for (const size_t n : index.lengths[first_byte(text.substr(pos))]) {
    if (n > text.size() - pos) continue;
    const auto it = index.by_spelling.find(std::string(text.substr(pos, n)));
    if (it != index.by_spelling.end()) return &tokens_[it->second];
  }
  return nullptr;
}

// The library's find_matches: leftmost-longest matches (its Aho-Corasick automaton,
// MatchKind::LeftmostLongest), the search going on from each match's end; lstrip / rstrip widen a
// match over the white space beside it, lstrip not back into the previous match.
std::vector<AddedVocabulary::Segment> AddedVocabulary::split(std::string_view text, bool at_start,
                                                             bool normalized) const {
  std::vector<Segment> out;
  size_t done = 0;
  for (size_t pos = 0; pos < text.size();) {
    const Token* t = longest_at(text, pos, normalized);
    if (!t) {
      ++pos;
      continue;
    }
    size_t start = pos, stop = pos + t->spelled.size();
    pos = stop;
    if (t->lstrip) start = std::max(white_space_before(text, start), done);
    if (t->rstrip) stop = white_space_after(text, stop);
    if (done < start)
      out.push_back({text.substr(done, start - done), at_start && done == 0, nullptr});
    out.push_back({text.substr(start, stop - start), false, t});
    done = stop;
  }
  if (done < text.size()) out.push_back({text.substr(done), at_start && done == 0, nullptr});
  return out;
}

const AddedVocabulary::Token* AddedVocabulary::find(uint32_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &tokens_[it->second];
}

std::optional<uint32_t> AddedVocabulary::id(std::string_view content) const {
  const auto it = by_content_.find(std::string(content));
  return it == by_content_.end() ? std::nullopt : std::optional<uint32_t>(tokens_[it->second].id);
}

uint32_t AddedVocabulary::end_id() const {
  uint32_t end = 0;
  for (const Token& t : tokens_) end = std::max(end, t.id + 1);
  return end;
}

}  // namespace attnbench::data::hf
