// The stages of a Hugging Face tokenizer.json pipeline (core/data/hf_tokenizer.h): normalizer,
// pre-tokenizer, BPE model and decoder. Each is parsed from its JSON object and reproduces the
// tokenizers library (0.23) for the types attnbench supports; anything else is refused with an
// InputError naming the file, the key path and the value (docs/tokenizer.md, "Hugging Face
// tokenizers"). Internal to core/data.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/data/piece_cache.h"
#include "core/data/rank_table.h"

namespace attnbench::data::hf {

using Json = nlohmann::json;

// A position in a JSON file, for messages: "<file>: normalizer.normalizers[1].type ...".
class Where {
 public:
  explicit Where(std::string file, std::string path = "")
      : file_(std::move(file)), path_(std::move(path)) {}
  Where operator/(std::string_view key) const;
  Where operator[](size_t index) const;
  // Throws InputError "<file>: <path> <what>".
  [[noreturn]] void fail(const std::string& what) const;

 private:
  std::string file_, path_;
};

// obj[key], or null when obj has no such key; fails unless obj is an object.
const Json& member(const Json& obj, const Where& at, const char* key);
// The string `value` (at `at`); fails for any other JSON type.
std::string string_at(const Json& value, const Where& at);
// obj[key] as a bool; `fallback` when absent or null.
bool bool_member(const Json& obj, const Where& at, const char* key, bool fallback);
// obj["type"], which must be a string.
std::string type_of(const Json& obj, const Where& at);
// Fails with "<at> <value as JSON> is not supported (supported: <supported>)".
[[noreturn]] void unsupported(const Where& at, const Json& value, const std::string& supported);

// Text on its way to the model. at_start: the piece begins at the first byte of the input text
// (the library's offsets_original().0 == 0, which Metaspace's prepend_scheme "first" tests).
struct Piece {
  std::string text;
  bool at_start = false;
};

// normalizer: null, Sequence, Prepend, Replace (String pattern), NFC (ICU).
class Normalizer {
 public:
  static Normalizer parse(const Json& spec, const Where& at);
  std::string apply(std::string text) const;

 private:
  enum class Kind { Prepend, Replace, Nfc };
  struct Step {
    Kind kind;
    std::string pattern, content;  // Prepend: content only
  };
  void add(const Json& spec, const Where& at);
  std::vector<Step> steps_;
};

// pre_tokenizer: null, Sequence, ByteLevel, Split (Isolated / Removed), Metaspace.
class PreTokenizer {
 public:
  static PreTokenizer parse(const Json& spec, const Where& at);
  // The pieces of one segment of text, in order; empty pieces are dropped, as the library does.
  std::vector<Piece> apply(Piece segment) const;

  struct Step;  // one stage (hf_pretokenizers.cpp)

 private:
  void add(const Json& spec, const Where& at);
  std::vector<std::shared_ptr<const Step>> steps_;
};

// model: BPE by merge ranks (the library's BPE::merge_word and Word::merge_all).
class BpeModel {
 public:
  static BpeModel parse(const Json& spec, const Where& at);
  // Appends the ids of one pre-tokenised piece (valid UTF-8).
  void encode(std::string_view piece, std::vector<uint32_t>& out) const;
  std::optional<uint32_t> id(std::string_view token) const;
  const std::string* token(uint32_t id) const;  // nullptr for an id no token has
  size_t size() const { return count_; }        // tokens in the vocabulary
  uint32_t end_id() const { return static_cast<uint32_t>(tokens_.size()); }  // max id + 1

  // Ids above this are refused: a vocabulary that large is a broken file, and id -> token is a
  // dense table.
  static constexpr uint32_t kMaxId = (1u << 24) - 1;

 private:
  struct Merge {
    uint32_t rank, new_id;
  };
  void read_vocab(const Json& vocab, const Where& at);
  void read_merges(const Json& merges, const Where& at);
  std::vector<uint32_t> symbols(std::string_view piece) const;
  void merge(std::vector<uint32_t>& ids) const;
  const Merge* merge_of(uint32_t left, uint32_t right) const;

  RankTable vocab_;                  // token -> id
  std::vector<std::string> tokens_;  // id -> token ("" where no token has the id)
  std::vector<bool> has_token_;
  size_t count_ = 0;
  std::unordered_map<uint64_t, Merge> merges_;  // (left id << 32 | right id) -> merge
  std::optional<uint32_t> unk_;
  bool fuse_unk_ = false, ignore_merges_ = false;
  std::optional<std::array<uint32_t, 256>> byte_ids_;  // byte_fallback: <0xXX> per byte, or kNone
  std::shared_ptr<PieceCache> cache_;  // shared: copies share the memoised pieces
};

// added_tokens: the library's AddedVocabulary. Tokens with normalized false are found in the raw
// text, those with normalized true in the normalised text, each as leftmost-longest matches.
class AddedVocabulary {
 public:
  struct Token {
    uint32_t id;
    std::string content;
    std::string spelled;  // content, normalised when `normalized` (the library's
                          // normalized_cache): what text is searched for, what decoding uses
    bool lstrip, rstrip, normalized, special;
  };
  // A stretch of text between added tokens (token null), or one added token with the white space
  // its lstrip / rstrip took.
  struct Segment {
    std::string_view text;
    bool at_start;  // see Piece
    const Token* token;
  };

  // The list at `at`; content normalised for matching by `normalizer`, ids checked against the
  // ones the library assigns next to `model`'s vocabulary.
  static AddedVocabulary parse(const Json& list, const Where& at, const BpeModel& model,
                               const Normalizer& normalizer);
  // text cut at the tokens whose normalized flag is `normalized`; at_start: text begins the input.
  std::vector<Segment> split(std::string_view text, bool at_start, bool normalized) const;
  const Token* find(uint32_t id) const;  // nullptr when no added token has the id
  std::optional<uint32_t> id(std::string_view content) const;
  uint32_t end_id() const;  // max id + 1, 0 when empty

 private:
  // The tokens of one normalized flag, found in time linear in the text whatever their number:
  // each spelling once (the first token listed with it), and per first byte the lengths spelled.
  struct Index {
    std::unordered_map<std::string, size_t> by_spelling;  // -> index into tokens_
    std::array<std::vector<size_t>, 256> lengths;         // distinct, longest first
  };
  const Token* longest_at(std::string_view text, size_t pos, bool normalized) const;
  std::vector<Token> tokens_;
  std::unordered_map<uint32_t, size_t> by_id_;
  std::unordered_map<std::string, size_t> by_content_;
  Index raw_, normalized_;
};

// decoder: null, Sequence, ByteLevel, Metaspace, Replace (String pattern), ByteFallback, Fuse,
// Strip. Decoding returns valid UTF-8, as the library's String does.
class Decoder {
 public:
  static Decoder parse(const Json& spec, const Where& at);
  std::string decode(std::vector<std::string> tokens) const;

 private:
  enum class Kind { ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip };
  struct Step {
    Kind kind = Kind::Fuse;
    std::string from, to;        // Metaspace: replacement -> " "; Replace: pattern -> content;
                                 // Strip: from is the character
    size_t start = 0, stop = 0;  // Strip: at most this many copies at the front and the end
    bool drop_first = false;     // Metaspace: the first token's replacements are dropped
  };
  void add(const Json& spec, const Where& at);
  std::vector<Step> steps_;
  bool none_ = false;  // null decoder: the library joins the tokens with spaces
};

// Metaspace's prepend_scheme ("always" when absent), checked against the older add_prefix_space
// as the library's deserializer does; shared by the pre-tokenizer and the decoder.
std::string prepend_scheme(const Json& metaspace, const Where& at);

// text with every non-overlapping occurrence of the non-empty `pattern` replaced, left to right
// (the library's NormalizedString::replace and Replace decoder with a String pattern).
std::string replace_all(std::string_view text, std::string_view pattern, std::string_view content);

}  // namespace attnbench::data::hf
