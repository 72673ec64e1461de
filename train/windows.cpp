#include "train/windows.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "core/common/error.h"

namespace attnbench::train {
namespace {

// SplitMix64's finaliser (Steele, Lea & Flood 2014): a bijective 64-bit mix, so distinct
// (seed, n) pairs give well-spread, independent-looking draws.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

TrainWindows::TrainWindows(const std::vector<data::ShardReader>* shards, int64_t context_length,
                           uint64_t seed, int64_t fixed_token_position, int64_t fixed_token_id)
    : shards_(shards), window_(context_length + 1), seed_(mix(seed ^ 0x6174746e62656e63ULL)),
      fixed_position_(fixed_token_position), fixed_id_(fixed_token_id) {
  for (const auto& s : *shards_) {
    uint64_t starts = s.size() >= window_ ? static_cast<uint64_t>(s.size() - window_ + 1) : 0;
    total_starts_ += starts;
    cumulative_starts_.push_back(total_starts_);
  }
  if (total_starts_ == 0) {
    throw std::invalid_argument("no training shard holds a full window of " +
                                std::to_string(window_) + " tokens");
  }
}

void TrainWindows::next(int64_t n, int64_t* out) {
  peek(0, n, out);
  advance(n);
}

void TrainWindows::peek(int64_t first, int64_t n, int64_t* out) const {
  for (int64_t w = 0; w < n; ++w) {
    const auto index = static_cast<uint64_t>(cursor_ + first + w);
    // 2^64 is far above total_starts_, so the modulo's bias (< total / 2^64) is negligible.
    uint64_t r = mix(seed_ + index * 0xd1b54a32d192ed03ULL) % total_starts_;
    size_t shard = static_cast<size_t>(
        std::upper_bound(cumulative_starts_.begin(), cumulative_starts_.end(), r) -
        cumulative_starts_.begin());
    uint64_t before = shard == 0 ? 0 : cumulative_starts_[shard - 1];
    int64_t* dst = out + w * window_;
    (*shards_)[shard].read(static_cast<int64_t>(r - before), window_, dst);
    if (fixed_position_ >= 0) dst[fixed_position_] = fixed_id_;
  }
}

std::vector<MicroBatch> rank_micro_batches(int64_t batch, int64_t micro_steps, int rank,
                                           int world) {
  std::vector<MicroBatch> out;
  if (micro_steps % world == 0) {
    const int64_t per_rank = micro_steps / world;
    for (int64_t m = rank * per_rank; m < (rank + 1) * per_rank; ++m) out.push_back({m * batch, batch});
  } else if (batch % world == 0) {
    const int64_t share = batch / world;
    for (int64_t m = 0; m < micro_steps; ++m) out.push_back({m * batch + rank * share, share});
  } else {
    throw UsageError(fmt::format(
        "a step of {} micro-batch(es) of train.batch_size = {} windows cannot be split evenly over "
        "{} ranks: the number of ranks must divide the accumulation steps or train.batch_size",
        micro_steps, batch, world));
  }
  return out;
}

ValWindows::ValWindows(const std::vector<data::ShardReader>* shards, int64_t context_length,
                       int64_t max_tokens)
    : shards_(shards), window_(context_length + 1) {
  const int64_t wanted = (max_tokens + context_length - 1) / context_length;
  for (size_t i = 0; i < shards_->size() && count() < wanted; ++i) {
    for (int64_t off = 0; off + window_ <= (*shards_)[i].size() && count() < wanted;
         off += context_length) {
      starts_.emplace_back(i, off);
    }
  }
}

void ValWindows::fill(int64_t first, int64_t n, int64_t* out) const {
  for (int64_t w = 0; w < n; ++w) {
    auto [shard, off] = starts_.at(static_cast<size_t>(first + w));
    (*shards_)[shard].read(off, window_, out + w * window_);
  }
}

}  // namespace attnbench::train
