#include "core/data/rank_table.h"

#include <functional>

namespace attnbench::data {

size_t RankTable::find(std::string_view bytes) const {
  size_t mask = slots_.size() - 1;
  size_t i = std::hash<std::string_view>{}(bytes) & mask;
  while (true) {
    const Slot& s = slots_[i];
    if (s.rank == kNone) return i;
    if (s.length == bytes.size() &&
        std::string_view(arena_).substr(s.offset, s.length) == bytes)
      return i;
    i = (i + 1) & mask;
  }
}

uint32_t RankTable::get(std::string_view bytes) const { return slots_[find(bytes)].rank; }

void RankTable::set(std::string_view bytes, uint32_t rank) {
  if (rank == kNone) return;
  if ((count_ + 1) * 2 > slots_.size()) grow();  // load factor <= 1/2
  Slot& s = slots_[find(bytes)];
  if (s.rank == kNone) {
    s.offset = static_cast<uint32_t>(arena_.size());
    s.length = static_cast<uint32_t>(bytes.size());
    arena_.append(bytes);
    ++count_;
  }
  s.rank = rank;
}

void RankTable::grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  for (const Slot& s : old)
    if (s.rank != kNone) slots_[find(std::string_view(arena_).substr(s.offset, s.length))] = s;
}

}  // namespace attnbench::data
