// Token windows from llm.c shards (docs/training.md, "What a step does"). A window is T + 1
// consecutive tokens of one shard: inputs are its first T, targets its last T.
//
// Training windows are drawn uniformly at random over every valid start in every shard, from a
// counter-based generator: window n of a run with seed s starts at mix(s, n), so the sampler's whole
// state is the number of windows drawn (the cursor in a checkpoint) and a resumed run draws exactly
// the windows the uninterrupted run would have.
// Validation windows are sequential and non-overlapping in their targets: starts 0, T, 2T, ... of
// each shard in order, as many as cover `max_tokens` targets.
#pragma once
#include <cstdint>
#include <vector>

#include "core/data/shard.h"

namespace attnbench::train {

class TrainWindows {
 public:
  // `shards` must each hold at least `context_length` + 1 tokens (checked by preflight).
  // Mask@k (docs/paper.md 6): when fixed_token_position >= 0, token fixed_token_position of every
  // window (an input position, 0-based; also the target of the position before it) is replaced by
  // fixed_token_id.
  TrainWindows(const std::vector<data::ShardReader>* shards, int64_t context_length, uint64_t seed,
               int64_t fixed_token_position = -1, int64_t fixed_token_id = 0);

  // Writes the next `n` windows, n * (T + 1) tokens, into `out` and advances the cursor by n.
  void next(int64_t n, int64_t* out);
  // Windows cursor() + first .. + first + n - 1 into `out`, the cursor unchanged: a data-parallel
  // rank reads its share of a step's windows, then every rank advances past the whole step.
  void peek(int64_t first, int64_t n, int64_t* out) const;
  void advance(int64_t n) { cursor_ += n; }

  int64_t cursor() const { return cursor_; }
  void set_cursor(int64_t cursor) { cursor_ = cursor; }
  // Every valid start over all shards (sum of size - T per shard).
  uint64_t total_starts() const { return total_starts_; }
  // The shards' contents fingerprint (data::contents_checksum; the shards scanned by preflight).
  uint64_t contents_checksum() const { return data::contents_checksum(*shards_); }

 private:
  const std::vector<data::ShardReader>* shards_;
  int64_t window_;
  uint64_t seed_;
  int64_t fixed_position_, fixed_id_;
  std::vector<uint64_t> cumulative_starts_;  // prefix sums of each shard's valid starts
  uint64_t total_starts_ = 0;
  int64_t cursor_ = 0;
};

// One micro-batch of a data-parallel rank: windows [first, first + count) of its step's global
// batch (docs/distributed.md, "Exactly the same training").
struct MicroBatch {
  int64_t first = 0, count = 0;
};

// Rank `rank`'s share of a step of `micro_steps` micro-batches of `batch` windows, split over
// `world` ranks: whole micro-batches when world divides micro_steps (rank r takes a contiguous
// run of them), else an equal slice of every micro-batch when world divides batch; otherwise a
// UsageError. Every rank gets the same number of windows, so the mean of the ranks' mean losses is
// the mean over the global batch.
std::vector<MicroBatch> rank_micro_batches(int64_t batch, int64_t micro_steps, int rank,
                                           int world);

class ValWindows {
 public:
  ValWindows(const std::vector<data::ShardReader>* shards, int64_t context_length,
             int64_t max_tokens);
  int64_t count() const { return static_cast<int64_t>(starts_.size()); }
  // Windows [first, first + n) into `out` (n * (T + 1) tokens).
  void fill(int64_t first, int64_t n, int64_t* out) const;

 private:
  const std::vector<data::ShardReader>* shards_;
  int64_t window_;
  std::vector<std::pair<size_t, int64_t>> starts_;  // (shard, offset)
};

}  // namespace attnbench::train
