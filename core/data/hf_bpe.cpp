// tokenizer.json's "model" of type BPE (core/data/hf_pipeline.h), as the tokenizers library
// applies it: a piece starts as one symbol per character (unknown characters become <0xXX> byte
// tokens with byte_fallback, else the unk token), then the adjacent pair with the lowest merge
// rank is merged, leftmost first, until no adjacent pair has a merge. This is not tiktoken's rule
// (core/data/tokenizer.h merges by the rank of the concatenated token); the two differ for
// vocabularies trained by the tokenizers library.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <queue>

#include <nlohmann/json.hpp>

#include "core/data/hf_pipeline.h"
#include "core/data/utf8.h"

namespace attnbench::data::hf {

namespace {

uint64_t pair_key(uint32_t left, uint32_t right) { return uint64_t{left} << 32 | right; }

// merges entry i as its two tokens: "a b" (split on its one space, as the library's
// convert_merges_to_hashmap) or ["a", "b"].
std::pair<std::string, std::string> merge_parts(const Json& entry, const Where& at) {
  if (entry.is_array() && entry.size() == 2 && entry[0].is_string() && entry[1].is_string()) {
    return {entry[0].get<std::string>(), entry[1].get<std::string>()};
  }
  if (entry.is_string()) {
    const std::string& line = entry.get_ref<const std::string&>();
    size_t space = line.find(' ');
    if (space != std::string::npos && line.find(' ', space + 1) == std::string::npos) {
      return {line.substr(0, space), line.substr(space + 1)};
    }
  }
  at.fail(entry.dump() + " is not a merge (expected \"a b\" or [\"a\", \"b\"])");
}

void refuse_set(const Json& spec, const Where& at, const char* key) {  // null or "" only
  const Json& v = member(spec, at, key);
  if (!v.is_null() && !(v.is_string() && v.get_ref<const std::string&>().empty())) {
    unsupported(at / key, v, "null");
  }
}

}  // namespace

BpeModel BpeModel::parse(const Json& spec, const Where& at) {
  const std::string type = type_of(spec, at);
  if (type != "BPE") unsupported(at / "type", type, "BPE");
  const Json& dropout = member(spec, at, "dropout");
  if (!dropout.is_null() && !(dropout.is_number() && dropout.get<double>() == 0)) {
    unsupported(at / "dropout", dropout, "null, 0");
  }
  refuse_set(spec, at, "continuing_subword_prefix");
  refuse_set(spec, at, "end_of_word_suffix");

  BpeModel m;
  m.read_vocab(member(spec, at, "vocab"), at / "vocab");
  m.read_merges(member(spec, at, "merges"), at / "merges");
  const Json& unk = member(spec, at, "unk_token");
  if (!unk.is_null()) {
    std::string token = string_at(unk, at / "unk_token");
    m.unk_ = m.id(token);
    if (!m.unk_) (at / "unk_token").fail("'" + token + "' is not in model.vocab");
  }
  m.fuse_unk_ = bool_member(spec, at, "fuse_unk", false);
  m.ignore_merges_ = bool_member(spec, at, "ignore_merges", false);
  if (bool_member(spec, at, "byte_fallback", false)) {
    std::array<uint32_t, 256> ids;
    char name[7];
    for (int b = 0; b < 256; ++b) {
      std::snprintf(name, sizeof(name), "<0x%02X>", b);  // the library's format!("<{b:#04X}>")
      ids[b] = m.vocab_.get(name);
    }
    m.byte_ids_ = ids;
  }
  m.cache_ = std::make_shared<PieceCache>();
  return m;
}

void BpeModel::read_vocab(const Json& vocab, const Where& at) {
  if (!vocab.is_object()) at.fail("must be an object {token: id}");
  for (const auto& [token, id] : vocab.items()) {
    if (!id.is_number_unsigned() || id.get<uint64_t>() > kMaxId) {
      at.fail("gives '" + token + "' the id " + id.dump() + " (expected 0.." +
              std::to_string(kMaxId) + ")");
    }
    auto n = id.get<uint32_t>();
    if (n >= tokens_.size()) tokens_.resize(n + 1), has_token_.resize(n + 1);
    if (has_token_[n]) {
      at.fail("gives '" + token + "' and '" + tokens_[n] + "' the same id " + std::to_string(n));
    }
    tokens_[n] = token, has_token_[n] = true, ++count_;
    vocab_.set(token, n);
  }
}

// Each merge's rank is its position in the list; the library skips lines starting "#version".
void BpeModel::read_merges(const Json& merges, const Where& at) {
  if (!merges.is_array()) at.fail("must be a list of merges");
  uint32_t rank = 0;
  for (size_t i = 0; i < merges.size(); ++i) {
    if (merges[i].is_string() && merges[i].get_ref<const std::string&>().rfind("#version", 0) == 0)
      continue;
    const Where where = at[i];
    auto [left, right] = merge_parts(merges[i], where);
    auto id_of = [&](const std::string& token, const char* role) {
      auto found = id(token);
      if (!found) where.fail(role + ("'" + token + "', which is not in model.vocab"));
      return *found;
    };
    uint64_t key = pair_key(id_of(left, "names "), id_of(right, "names "));
    // A later merge of the same pair replaces an earlier one, as in the library's hash map.
    merges_[key] = {rank++, id_of(left + right, "makes ")};
  }
}

std::optional<uint32_t> BpeModel::id(std::string_view token) const {
  uint32_t id = vocab_.get(token);
  return id == RankTable::kNone ? std::nullopt : std::optional<uint32_t>(id);
}

const std::string* BpeModel::token(uint32_t id) const {
  return id < tokens_.size() && has_token_[id] ? &tokens_[id] : nullptr;
}

const BpeModel::Merge* BpeModel::merge_of(uint32_t left, uint32_t right) const {
  auto it = merges_.find(pair_key(left, right));
  return it == merges_.end() ? nullptr : &it->second;
}

// The library's BPE::merge_word before merging: one symbol per character. An unknown character
// becomes its bytes' <0xXX> tokens (byte_fallback, when all 256 exist for its bytes), else the unk
// token (one for a run of them under fuse_unk), else nothing. As in the library, a pending unk is
// only written when a known character follows, so byte tokens can come before it.
std::vector<uint32_t> BpeModel::symbols(std::string_view piece) const {
  std::vector<uint32_t> ids;
  std::optional<uint32_t> pending_unk;
  for (size_t i = 0; i < piece.size();) {
    const size_t len = std::max<size_t>(1, utf8_sequence_length(piece.substr(i)));
    const std::string_view ch = piece.substr(i, len);
    i += len;
    if (auto known = id(ch)) {
      if (pending_unk) ids.push_back(*pending_unk), pending_unk.reset();
      ids.push_back(*known);
    } else if (byte_ids_ && std::all_of(ch.begin(), ch.end(), [&](char b) {
                 return (*byte_ids_)[static_cast<uint8_t>(b)] != RankTable::kNone;
               })) {
      for (char b : ch) ids.push_back((*byte_ids_)[static_cast<uint8_t>(b)]);
    } else if (unk_) {
      if (pending_unk && !fuse_unk_) ids.push_back(*pending_unk);
      pending_unk = unk_;
    }
  }
  if (pending_unk) ids.push_back(*pending_unk);
  return ids;
}

// The library's Word::merge_all: a min-heap of (rank, position) over adjacent pairs. An entry is
// stale when its left symbol was absorbed, or when its pair now merges into another token: the
// library compares only the resulting id, not the rank, and so does this.
void BpeModel::merge(std::vector<uint32_t>& ids) const {
  if (ids.size() < 2) return;
  constexpr size_t kNil = SIZE_MAX;
  struct Symbol {
    uint32_t id;
    size_t prev, next;
    bool gone;
  };
  std::vector<Symbol> sym(ids.size());
  for (size_t i = 0; i < ids.size(); ++i)
    sym[i] = {ids[i], i ? i - 1 : kNil, i + 1 < ids.size() ? i + 1 : kNil, false};
  struct Candidate {
    uint32_t rank;
    size_t pos;
    uint32_t new_id;
  };
  auto later = [](const Candidate& a, const Candidate& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(later)> heap(later);
  auto offer = [&](size_t pos) {
    if (pos == kNil || sym[pos].next == kNil) return;
    if (const Merge* m = merge_of(sym[pos].id, sym[sym[pos].next].id))
      heap.push({m->rank, pos, m->new_id});
  };
  for (size_t i = 0; i + 1 < ids.size(); ++i) offer(i);
  while (!heap.empty()) {
    const Candidate top = heap.top();
    heap.pop();
    Symbol& left = sym[top.pos];
    if (left.gone || left.next == kNil) continue;
    const Merge* m = merge_of(left.id, sym[left.next].id);
    if (!m || m->new_id != top.new_id) continue;
    Symbol& right = sym[left.next];
    right.gone = true;
    left.id = top.new_id;
    left.next = right.next;
    if (left.next != kNil) sym[left.next].prev = top.pos;
    offer(left.prev);
    offer(top.pos);
  }
  ids.clear();
  for (size_t i = 0; i != kNil; i = sym[i].next) ids.push_back(sym[i].id);
}

void BpeModel::encode(std::string_view piece, std::vector<uint32_t>& out) const {
  if (piece.empty()) return;
  if (ignore_merges_) {  // Llama 3: a piece that is a token is that token, whatever the merges say
    if (auto whole = id(piece)) return out.push_back(*whole);
  }
  // Memoised as the library's BPE cache does: pieces under 256 bytes.
  const bool cacheable = piece.size() < 256;
  if (cacheable && cache_->get(piece, out)) return;
  std::vector<uint32_t> ids = symbols(piece);
  merge(ids);
  out.insert(out.end(), ids.begin(), ids.end());
  if (cacheable) cache_->put(piece, ids.data(), ids.size());
}

}  // namespace attnbench::data::hf
