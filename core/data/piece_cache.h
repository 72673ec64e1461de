// Pieces already encoded by BPE, memoised: natural text repeats its words. Shared by the GPT-2
// tokenizer (core/data/tokenizer.h) and the Hugging Face tokenizers (core/data/hf_tokenizer.h).
// Sharded locks keep threads (encode_batch) from queueing on one mutex; a shard that grows past
// its bound is cleared (a corpus has an unbounded number of distinct pieces).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attnbench::data {

class PieceCache {
 public:
  // Appends the cached ids of `piece` to `out`; false when it is not cached.
  bool get(std::string_view piece, std::vector<uint32_t>& out) {
    Shard& s = shard(piece);
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.map.find(std::string(piece));
    if (it == s.map.end()) return false;
    out.insert(out.end(), it->second.begin(), it->second.end());
    return true;
  }
  void put(std::string_view piece, const uint32_t* ids, size_t n) {
    Shard& s = shard(piece);
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.map.size() >= kShardEntries) s.map.clear();
    s.map.emplace(std::string(piece), std::vector<uint32_t>(ids, ids + n));
  }

 private:
  static constexpr size_t kShards = 64, kShardEntries = 1 << 14;
  struct Shard {
    std::mutex mutex;
    std::unordered_map<std::string, std::vector<uint32_t>> map;
  };
  Shard& shard(std::string_view piece) {
    return shards_[std::hash<std::string_view>{}(piece) % kShards];
  }
  Shard shards_[kShards];
};

}  // namespace attnbench::data
