// llm.c token shards (docs/data.md, "Output"): a header of 256 int32 — [0] magic 20240520,
// [1] version (1 = uint16 tokens, 2 = uint32 tokens), [2] token count — then the tokens,
// little-endian. FineWeb-Edu shards made by llm.c's scripts load as they are.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace attnbench::data {

constexpr int32_t kShardMagic = 20240520;
constexpr size_t kShardHeaderInts = 256;
constexpr size_t kShardHeaderBytes = kShardHeaderInts * sizeof(int32_t);

// A read-only, memory-mapped shard. The constructor validates magic, version and that the file
// size equals header + count * token width; any mismatch throws UsageError naming the file.
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
  uint32_t operator[](int64_t i) const {
    return version_ == 1 ? reinterpret_cast<const uint16_t*>(tokens_)[i]
                         : reinterpret_cast<const uint32_t*>(tokens_)[i];
  }
  // Copies tokens [offset, offset + n) into out (bounds checked).
  void read(int64_t offset, int64_t n, int64_t* out) const;

 private:
  std::filesystem::path path_;
  int version_ = 0;
  int64_t count_ = 0;
  const uint8_t* map_ = nullptr;
  size_t map_size_ = 0;
  const uint8_t* tokens_ = nullptr;
};

// Writes a shard atomically (temporary file in the same folder, then rename). version 0 picks 1 when
// every token fits in uint16, else 2.
void write_shard(const std::filesystem::path& path, const std::vector<uint32_t>& tokens,
                 int version = 0);

// Shards named by a spec: a file, a folder (every *.bin in it, sorted), or a glob pattern (sorted).
// Throws UsageError when nothing matches.
std::vector<std::filesystem::path> resolve_shards(const std::string& spec);

}  // namespace attnbench::data
