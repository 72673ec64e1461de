// llm.c token shards (docs/data.md, "Output"): a header of 256 int32 — [0] magic 20240520,
// [1] version (1 = uint16 tokens, 2 = uint32 tokens), [2] token count — then the tokens,
// little-endian. FineWeb-Edu shards made by llm.c's scripts load as they are.
#pragma once
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnbench::data {

constexpr int32_t kShardMagic = 20240520;
constexpr size_t kShardHeaderInts = 256;
constexpr size_t kShardHeaderBytes = kShardHeaderInts * sizeof(int32_t);

// A read-only shard. The constructor validates magic, version and that the file size equals
// header + count * token width; any mismatch throws UsageError naming the file.
//
// Tokens are read with pread, not through a memory map: a shard truncated while a run reads it
// must be an error naming it, where a mapped page past the new end of file would kill the process
// with SIGBUS. The file's size and modification time at open are kept, and every read checks them
// (one fstat): a shard that shrank, grew or was rewritten throws ShardChanged, a runtime error
// (exit 1) that leaves a training run resumable from its last checkpoint once the file is restored.
// One thread at a time reads a shard (read() updates the recorded time, see scan()).
class ShardReader {
 public:
  explicit ShardReader(const std::filesystem::path& path);
  ~ShardReader();
  ShardReader(ShardReader&& other) noexcept;
  ShardReader& operator=(ShardReader&&) = delete;
  ShardReader(const ShardReader&) = delete;

  const std::filesystem::path& path() const { return path_; }
  int version() const { return version_; }
  int64_t size() const { return count_; }
  // Copies tokens [offset, offset + n) into out (bounds checked; ShardChanged, see above).
  void read(int64_t offset, int64_t n, int64_t* out) const;
  // Reads the whole shard once: returns its largest token id and records the XXH3-64 checksum of
  // its bytes. After a scan, a read that finds only the modification time changed (a `touch`, a
  // copy of the same bytes) re-hashes the file and goes on when the checksum still matches.
  uint32_t scan();
  // XXH3-64 of the file's bytes as scan() read them (0 before a scan).
  uint64_t checksum() const { return checksum_; }

 private:
  void validate_header();
  void check_unchanged() const;
  // XXH3-64 of the whole file; with `max_token`, also the largest token id in it.
  uint64_t checksum_file(uint32_t* max_token = nullptr) const;

  std::filesystem::path path_;
  int fd_ = -1;
  int version_ = 0;
  int64_t count_ = 0;
  int64_t bytes_ = 0;
  mutable int64_t mtime_ns_ = 0;  // modification time when opened, or when last verified
  bool scanned_ = false;
  uint64_t checksum_ = 0;
};

// A shard that changed on disk after it was opened (see ShardReader): a runtime failure.
class ShardChanged : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The contents fingerprint of a split: XXH3-64 of its shards' checksums in order, each shard
// scanned (ShardReader::scan). Two splits of the same length but other tokens, or the same shards
// in another order, differ.
uint64_t contents_checksum(const std::vector<ShardReader>& shards);

// Writes a shard atomically (temporary file in the same folder, then rename). version 0 picks 1 when
// every token fits in uint16, else 2.
void write_shard(const std::filesystem::path& path, const std::vector<uint32_t>& tokens,
                 int version = 0);

// Shards named by a spec: a file, a folder (every *.bin in it, sorted), or a glob pattern (sorted).
// Throws UsageError when nothing matches.
std::vector<std::filesystem::path> resolve_shards(const std::string& spec);

}  // namespace attnbench::data
