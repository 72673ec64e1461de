#include "core/data/tokenizer.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <queue>
#include <sstream>
#include <thread>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/common/paths.h"
#include "core/data/byte_unicode.h"
#include "core/data/piece_cache.h"
#include "core/data/pretokenizer.h"
#include "core/data/rank_table.h"
#include "core/common/regular_file.h"
#include "core/data/utf8.h"

namespace attnbench::data {

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  try {
    return read_regular_file(p, "tokenizer file");
  } catch (const UsageError& e) {
    throw UsageError(std::string(e.what()) + " (expected the GPT-2 tokenizer files encoder.json " +
                     "and vocab.bpe in " + p.parent_path().string() + ")");
  }
}

// vocab.bpe -> ranks, as tiktoken.load.data_gym_to_mergeable_bpe_ranks: the 256 single bytes in
// table order, then one rank per merge line, in file order.
void read_merge_ranks(const fs::path& vocab_path, RankTable& ranks) {
  uint32_t next = 0;
  for (uint8_t b : byte_rank_order()) ranks.set(std::string(1, static_cast<char>(b)), next++);
  std::string text = read_file(vocab_path);
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (lineno == 1 && line.rfind("#version", 0) == 0) continue;
    if (line.empty()) continue;
    size_t sp = line.find(' ');
    auto bad = [&](const std::string& what) {
      return InputError({vocab_path.string(), lineno, 0},
                        what + " (expected a merge: two GPT-2 byte-spelled tokens separated by "
                               "one space)");
    };
    if (sp == std::string::npos || sp == 0 || sp + 1 == line.size() ||
        line.find(' ', sp + 1) != std::string::npos)
      throw bad("malformed merge line '" + line + "'");
    auto first = unicode_to_bytes(std::string_view(line).substr(0, sp));
    auto second = unicode_to_bytes(std::string_view(line).substr(sp + 1));
    if (!first || !second) throw bad("character outside the GPT-2 byte table in '" + line + "'");
    ranks.set(*first + *second, next++);
  }
}

// encoder.json, which must be one JSON object {token: id, ...}.
nlohmann::json read_encoder(const fs::path& encoder_path) {
  nlohmann::json enc;
  try {
    enc = nlohmann::json::parse(read_file(encoder_path));
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e999
    throw InputError({encoder_path.string(), 0, 0},
                     std::string("invalid JSON: ") + e.what() + " (expected {token: id, ...})");
  }
  if (!enc.is_object()) throw InputError({encoder_path.string(), 0, 0}, "expected a JSON object");
  return enc;
}

// The bytes of an encoder.json token other than <|endoftext|>; its id must be the rank vocab.bpe
// gives those bytes, or the two files are from different tokenizers.
std::string ordinary_token_bytes(const std::string& key, uint32_t id, const RankTable& ranks,
                                 const fs::path& encoder_path) {
  auto bytes = unicode_to_bytes(key);
  if (!bytes) {
    throw InputError({encoder_path.string(), 0, 0},
                     "token '" + key + "' uses a character outside the GPT-2 byte table");
  }
  uint32_t rank = ranks.get(*bytes);
  if (rank != id) {
    throw InputError({encoder_path.string(), 0, 0},
                     "token '" + key + "' has id " + std::to_string(id) + " but vocab.bpe gives it " +
                         (rank == RankTable::kNone ? std::string("no rank")
                                                   : "rank " + std::to_string(rank)) +
                         " (encoder.json and vocab.bpe are from different tokenizers)");
  }
  return *bytes;
}

}  // namespace

struct Tokenizer::Impl {
  RankTable ranks;                  // token bytes -> rank (= GPT-2 id)
  std::vector<std::string> tokens;  // id -> bytes
  Pretokenizer pretokenizer;
  PieceCache cache;  // pieces that are not one vocabulary entry

  // tiktoken's _byte_pair_merge: repeatedly merge the adjacent pair whose concatenation has the
  // lowest rank (leftmost on ties) until no adjacent concatenation is a token.
  void bpe(std::string_view piece, std::vector<uint32_t>& out) const {
    const size_t n = piece.size();
    if (n > kLongPiece) return bpe_long(piece, out);
    // parts[i] = (start of part i, rank of part i concatenated with part i+1)
    std::vector<std::pair<size_t, uint32_t>> parts;
    parts.reserve(n + 1);
    for (size_t i = 0; i + 1 < n; ++i) parts.emplace_back(i, ranks.get(piece.substr(i, 2)));
    parts.emplace_back(n - 1, RankTable::kNone);
    parts.emplace_back(n, RankTable::kNone);
    auto pair_rank = [&](size_t i) {  // rank of parts i and i+1 joined, once i+1 is removed
      if (i + 3 >= parts.size()) return RankTable::kNone;
      return ranks.get(piece.substr(parts[i].first, parts[i + 3].first - parts[i].first));
    };
    while (true) {
      uint32_t best = RankTable::kNone;
      size_t at = 0;
      for (size_t i = 0; i + 1 < parts.size(); ++i)
        if (parts[i].second < best) best = parts[i].second, at = i;
      if (best == RankTable::kNone) break;
      if (at > 0) parts[at - 1].second = pair_rank(at - 1);
      parts[at].second = pair_rank(at);
      parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(at) + 1);
    }
    for (size_t i = 0; i + 1 < parts.size(); ++i)
      out.push_back(ranks.get(piece.substr(parts[i].first, parts[i + 1].first - parts[i].first)));
  }

  // The same merge order for long pieces (runs of spaces or digits can be megabytes; the loop
  // above is quadratic): a min-heap of (rank, start of left part) over adjacent pairs, with
  // stale entries skipped. Ordering by start breaks ties leftmost, as tiktoken does.
  static constexpr size_t kLongPiece = 256;
  void bpe_long(std::string_view piece, std::vector<uint32_t>& out) const {
    const size_t n = piece.size(), none = SIZE_MAX;
    std::vector<size_t> next(n), prev(n);  // parts as a linked list, named by their start byte
    for (size_t i = 0; i < n; ++i) next[i] = i + 1 < n ? i + 1 : none, prev[i] = i ? i - 1 : none;
    auto end = [&](size_t part) { return next[part] == none ? n : next[part]; };
    struct Pair {
      uint32_t rank;
      size_t left, right_end;
      bool operator>(const Pair& o) const {
        return rank != o.rank ? rank > o.rank : left > o.left;
      }
    };
    std::priority_queue<Pair, std::vector<Pair>, std::greater<Pair>> heap;
    auto push = [&](size_t left) {
      if (left == none || next[left] == none) return;
      size_t right_end = end(next[left]);
      uint32_t r = ranks.get(piece.substr(left, right_end - left));
      if (r != RankTable::kNone) heap.push({r, left, right_end});
    };
    for (size_t i = 0; i + 1 < n; ++i) push(i);
    std::vector<bool> alive(n, true);
    while (!heap.empty()) {
      Pair p = heap.top();
      heap.pop();
      if (!alive[p.left] || next[p.left] == none || end(next[p.left]) != p.right_end) continue;
      size_t right = next[p.left];
      alive[right] = false;
      next[p.left] = next[right];
      if (next[right] != none) prev[next[right]] = p.left;
      push(prev[p.left]);
      push(p.left);
    }
    for (size_t part = 0; part != none; part = next[part])
      out.push_back(ranks.get(piece.substr(part, end(part) - part)));
  }

  void encode_piece(std::string_view piece, std::vector<uint32_t>& out) {
    uint32_t whole = ranks.get(piece);
    if (whole != RankTable::kNone) {  // most words are one token: no cache, no lock
      out.push_back(whole);
      return;
    }
    if (cache.get(piece, out)) return;
    size_t start = out.size();
    bpe(piece, out);
    cache.put(piece, out.data() + start, out.size() - start);
  }

  void encode(std::string_view text, std::vector<uint32_t>& out) {
    auto on_piece = [&](std::string_view p) { encode_piece(p, out); };
    size_t i = 0;
    while (i < text.size()) {
      size_t valid = utf8_valid_prefix(text.substr(i));
      if (valid > 0) pretokenizer.split(text.substr(i, valid), on_piece);
      i += valid;
      // Invalid UTF-8: each maximal run of bytes at which no well-formed sequence starts is one
      // piece of raw bytes (docs/tokenizer.md); byte-level BPE can spell any bytes.
      size_t invalid = utf8_invalid_prefix(text.substr(i));
      if (invalid > 0) encode_piece(text.substr(i, invalid), out);
      i += invalid;
    }
  }
};

Tokenizer Tokenizer::load(const fs::path& dir) {
  const fs::path encoder_path = dir / "encoder.json", vocab_path = dir / "vocab.bpe";
  auto impl = std::make_shared<Impl>();
  read_merge_ranks(vocab_path, impl->ranks);

  // encoder.json -> id to bytes; every id must equal the rank derived from vocab.bpe.
  const nlohmann::json enc = read_encoder(encoder_path);
  impl->tokens.resize(enc.size());
  size_t ordinary = 0;
  for (auto& [key, value] : enc.items()) {
    if (!value.is_number_unsigned() || value.get<uint64_t>() >= enc.size()) {
      throw InputError({encoder_path.string(), 0, 0},
                       "token '" + key + "' has id " + value.dump() + ", expected 0.." +
                           std::to_string(enc.size() - 1));
    }
    auto id = value.get<uint32_t>();
    if (key == kEndOfTextText) {
      if (id != kEndOfText) {
        throw InputError({encoder_path.string(), 0, 0},
                         "<|endoftext|> has id " + std::to_string(id) + ", GPT-2's is 50256");
      }
      impl->tokens[id] = key;
      continue;
    }
    impl->tokens[id] = ordinary_token_bytes(key, id, impl->ranks, encoder_path);
    ++ordinary;
  }
  if (ordinary != impl->ranks.size() || enc.size() != kEndOfText + 1) {
    throw InputError({encoder_path.string(), 0, 0},
                     std::to_string(enc.size()) + " tokens, " + std::to_string(impl->ranks.size()) +
                         " ranks from vocab.bpe: expected GPT-2's 50257 tokens = 50256 ranks + "
                         "<|endoftext|>");
  }
  Tokenizer t;
  t.impl_ = std::move(impl);
  return t;
}

size_t Tokenizer::vocab_size() const { return impl_->tokens.size(); }

void Tokenizer::encode_append(std::string_view text, std::vector<uint32_t>& out) const {
  impl_->encode(text, out);
}

std::vector<uint32_t> Tokenizer::encode(std::string_view text) const {
  std::vector<uint32_t> out;
  out.reserve(text.size() / 4 + 1);
  impl_->encode(text, out);
  return out;
}

std::vector<uint32_t> Tokenizer::encode_document(std::string_view text) const {
  std::vector<uint32_t> out;
  out.reserve(text.size() / 4 + 2);
  out.push_back(kEndOfText);
  impl_->encode(text, out);
  return out;
}

std::vector<std::vector<uint32_t>> Tokenizer::encode_batch(const std::vector<std::string>& docs,
                                                           int threads) const {
  std::vector<std::vector<uint32_t>> out(docs.size());
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<int>(std::min<size_t>(static_cast<size_t>(threads), docs.size()));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < docs.size();) out[i] = encode(docs[i]);
  };
  std::vector<std::thread> pool;
  std::exception_ptr error;
  std::mutex error_mutex;
  for (int t = 1; t < threads; ++t) {
    pool.emplace_back([&] {
      try {
        work();
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        next = docs.size();
      }
    });
  }
  try {
    work();
  } catch (...) {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!error) error = std::current_exception();
    next = docs.size();
  }
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
  return out;
}

std::string_view Tokenizer::token_bytes(uint32_t id) const {
  if (id >= impl_->tokens.size()) {
    throw UsageError("token id " + std::to_string(id) + " is outside the GPT-2 vocabulary (0.." +
                     std::to_string(impl_->tokens.size() - 1) + ")");
  }
  return impl_->tokens[id];
}

std::string Tokenizer::decode(const std::vector<uint32_t>& ids) const {
  std::string out;
  for (uint32_t id : ids) out.append(token_bytes(id));
  return out;
}

fs::path gpt2_tokenizer_dir(const std::string& cli_data_dir) {
  require_data_file("gpt2_tokenizer/vocab.bpe", cli_data_dir);
  return require_data_file("gpt2_tokenizer/encoder.json", cli_data_dir).parent_path();
}

}  // namespace attnbench::data
