#include "core/data/shard.h"

#include <fcntl.h>
#include <glob.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "core/common/error.h"

namespace attnbench::data {

namespace fs = std::filesystem;

ShardReader::ShardReader(const fs::path& path) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw UsageError("cannot open shard " + path.string() + ": " + std::strerror(errno));
  struct stat st {};
  ::fstat(fd, &st);
  map_size_ = static_cast<size_t>(st.st_size);
  if (map_size_ < kShardHeaderBytes) {
    ::close(fd);
    throw UsageError(path.string() + ": " + std::to_string(map_size_) +
                     " bytes, too small for an llm.c shard (header alone is 1024 bytes)");
  }
  void* m = ::mmap(nullptr, map_size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) throw UsageError("cannot map shard " + path.string());
  map_ = static_cast<const uint8_t*>(m);
  int32_t header[3];
  std::memcpy(header, map_, sizeof(header));
  auto fail = [&](const std::string& what) {
    ::munmap(const_cast<uint8_t*>(map_), map_size_);
    map_ = nullptr;
    throw UsageError(path.string() + ": " + what);
  };
  if (header[0] != kShardMagic) {
    fail("bad magic " + std::to_string(header[0]) + " (expected " + std::to_string(kShardMagic) +
         ": not an llm.c token shard)");
  }
  if (header[1] != 1 && header[1] != 2) {
    fail("unsupported shard version " + std::to_string(header[1]) +
         " (expected 1 = uint16 tokens or 2 = uint32 tokens)");
  }
  version_ = header[1];
  count_ = header[2];
  size_t width = version_ == 1 ? 2 : 4;
  size_t expected = kShardHeaderBytes + static_cast<size_t>(count_) * width;
  if (count_ < 0 || expected != map_size_) {
    fail("file is " + std::to_string(map_size_) + " bytes but its header promises " +
         std::to_string(count_) + " tokens of " + std::to_string(width) + " bytes (" +
         std::to_string(expected) + " bytes): truncated or corrupt");
  }
  tokens_ = map_ + kShardHeaderBytes;
}

ShardReader::ShardReader(ShardReader&& o) noexcept
    : path_(std::move(o.path_)), version_(o.version_), count_(o.count_), map_(o.map_),
      map_size_(o.map_size_), tokens_(o.tokens_) {
  o.map_ = nullptr;
}

ShardReader::~ShardReader() {
  if (map_) ::munmap(const_cast<uint8_t*>(map_), map_size_);
}

void ShardReader::read(int64_t offset, int64_t n, int64_t* out) const {
  if (offset < 0 || n < 0 || offset + n > count_) {
    throw std::out_of_range(path_.string() + ": read of tokens [" + std::to_string(offset) + ", " +
                            std::to_string(offset + n) + ") past the end (" +
                            std::to_string(count_) + " tokens)");
  }
  for (int64_t i = 0; i < n; ++i) out[i] = (*this)[offset + i];
}

void write_shard(const fs::path& path, const std::vector<uint32_t>& tokens, int version) {
  if (version == 0) {
    bool small = std::all_of(tokens.begin(), tokens.end(), [](uint32_t t) { return t < 65536; });
    version = small ? 1 : 2;
  }
  if (version != 1 && version != 2) throw std::invalid_argument("shard version must be 1 or 2");
  std::vector<int32_t> header(kShardHeaderInts, 0);
  header[0] = kShardMagic;
  header[1] = version;
  header[2] = static_cast<int32_t>(tokens.size());
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write " + tmp.string());
    f.write(reinterpret_cast<const char*>(header.data()), kShardHeaderBytes);
    if (version == 1) {
      std::vector<uint16_t> narrow(tokens.begin(), tokens.end());
      f.write(reinterpret_cast<const char*>(narrow.data()), narrow.size() * 2);
    } else {
      f.write(reinterpret_cast<const char*>(tokens.data()), tokens.size() * 4);
    }
    f.flush();
    if (!f) throw std::runtime_error("write failed: " + tmp.string());
  }
  fs::rename(tmp, path);
}

std::vector<fs::path> resolve_shards(const std::string& spec) {
  std::vector<fs::path> out;
  if (fs::is_regular_file(spec)) {
    out.push_back(spec);
  } else if (fs::is_directory(spec)) {
    for (auto& e : fs::directory_iterator(spec))
      if (e.path().extension() == ".bin") out.push_back(e.path());
  } else {
    glob_t g{};
    if (::glob(spec.c_str(), 0, nullptr, &g) == 0)
      for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
    globfree(&g);
  }
  std::sort(out.begin(), out.end());
  if (out.empty()) {
    throw UsageError("no token shards match '" + spec +
                     "' (expected an llm.c .bin shard, a folder of them, or a glob; make them with "
                     "`attnbench data prepare`)");
  }
  return out;
}

}  // namespace attnbench::data
