// Byte string -> BPE rank, looked up by string_view without allocating (the BPE merge loop asks
// for the rank of every adjacent pair, millions of times per second). Open addressing, linear
// probing, keys stored in one arena.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnbench::data {

class RankTable {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // Inserts or overwrites.
  void set(std::string_view bytes, uint32_t rank);
  // The rank of bytes, or kNone.
  uint32_t get(std::string_view bytes) const;
  size_t size() const { return count_; }

  // Calls f(bytes, rank) for every entry (unordered).
  template <class F>
  void for_each(F&& f) const {
    for (const auto& s : slots_)
      if (s.rank != kNone) f(std::string_view(arena_).substr(s.offset, s.length), s.rank);
  }

 private:
  struct Slot {
    uint32_t offset = 0, length = 0, rank = kNone;
  };
  size_t find(std::string_view bytes) const;  // slot holding bytes, or the empty slot to use
  void grow();

  std::string arena_;
  std::vector<Slot> slots_ = std::vector<Slot>(16);
  size_t count_ = 0;
};

}  // namespace attnbench::data
