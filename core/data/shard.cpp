#include "core/data/shard.h"

#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

#include "core/common/error.h"
#include "core/common/regular_file.h"

namespace attnbench::data {

namespace fs = std::filesystem;

namespace {

int64_t mtime_ns(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

// Reads exactly `n` bytes at `offset`; false when the file ends first.
bool pread_all(int fd, void* dst, size_t n, int64_t offset, const fs::path& path) {
  auto* p = static_cast<uint8_t*>(dst);
  while (n > 0) {
    const ssize_t got = ::pread(fd, p, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      throw std::runtime_error("cannot read shard " + path.string() + ": " + std::strerror(errno));
    }
    if (got == 0) return false;
    p += got, n -= static_cast<size_t>(got), offset += got;
  }
  return true;
}

// Token `i` of raw little-endian tokens of `width` bytes (2: uint16, 4: uint32).
uint32_t token_at(const uint8_t* raw, int64_t i, size_t width) {
  if (width == 2) {
    uint16_t t;
    std::memcpy(&t, raw + 2 * i, 2);
    return t;
  }
  uint32_t t;
  std::memcpy(&t, raw + 4 * i, 4);
  return t;
}

std::string changed_message(const fs::path& path, const std::string& what) {
  return path.string() + ": the shard " + what + " since this process opened it; shards must not " +
         "change while a run reads them. Restore the file and run the same command again (training " +
         "resumes from its last checkpoint)";
}

}  // namespace

ShardReader::ShardReader(const fs::path& path)
    : path_(path), fd_(open_regular_file(path, "shard")) {
  try {
    validate_header();
  } catch (...) {
    ::close(fd_);  // the destructor does not run for a constructor that throws
    throw;
  }
}

void ShardReader::validate_header() {
  auto fail = [&](const std::string& what) { throw UsageError(path_.string() + ": " + what); };
  struct stat st {};
  if (::fstat(fd_, &st) != 0) fail(std::string("cannot stat: ") + std::strerror(errno));
  bytes_ = static_cast<int64_t>(st.st_size);
  mtime_ns_ = mtime_ns(st);
  int32_t header[3] = {0, 0, 0};
  if (bytes_ < static_cast<int64_t>(kShardHeaderBytes) ||
      !pread_all(fd_, header, sizeof(header), 0, path_)) {
    fail(std::to_string(bytes_) +
         " bytes, too small for an llm.c shard (header alone is 1024 bytes)");
  }
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
  const int64_t width = version_ == 1 ? 2 : 4;
  const int64_t expected = static_cast<int64_t>(kShardHeaderBytes) + count_ * width;
  if (count_ < 0 || expected != bytes_) {
    fail("file is " + std::to_string(bytes_) + " bytes but its header promises " +
         std::to_string(count_) + " tokens of " + std::to_string(width) + " bytes (" +
         std::to_string(expected) + " bytes): truncated or corrupt");
  }
}

ShardReader::ShardReader(ShardReader&& o) noexcept
    : path_(std::move(o.path_)), fd_(o.fd_), version_(o.version_), count_(o.count_),
      bytes_(o.bytes_), mtime_ns_(o.mtime_ns_), scanned_(o.scanned_), checksum_(o.checksum_) {
  o.fd_ = -1;
}

ShardReader::~ShardReader() {
  if (fd_ >= 0) ::close(fd_);
}

void ShardReader::check_unchanged() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    throw std::runtime_error("cannot stat shard " + path_.string() + ": " + std::strerror(errno));
  }
  if (static_cast<int64_t>(st.st_size) != bytes_) {
    throw ShardChanged(changed_message(path_, (st.st_size < bytes_ ? "shrank from " : "grew from ") +
                                                  std::to_string(bytes_) + " to " +
                                                  std::to_string(st.st_size) + " bytes"));
  }
  if (mtime_ns(st) == mtime_ns_) return;
  if (!scanned_ || checksum_file() != checksum_) {
    throw ShardChanged(changed_message(path_, "was modified"));
  }
  mtime_ns_ = mtime_ns(st);  // same bytes: only the time moved
}

void ShardReader::read(int64_t offset, int64_t n, int64_t* out) const {
  if (offset < 0 || n < 0 || offset + n > count_) {
    throw std::out_of_range(path_.string() + ": read of tokens [" + std::to_string(offset) + ", " +
                            std::to_string(offset + n) + ") past the end (" +
                            std::to_string(count_) + " tokens)");
  }
  check_unchanged();
  const size_t width = version_ == 1 ? 2 : 4;
  // The raw tokens land in the front of `out` and are widened in place, last one first: token i's
  // raw bytes [width * i, width * i + width) are loaded before out[i] (bytes [8i, 8i + 8)) is
  // written, and out[i] never reaches the raw bytes of a token before i. No buffer, no copy.
  auto* raw = reinterpret_cast<uint8_t*>(out);
  const int64_t at = static_cast<int64_t>(kShardHeaderBytes) + offset * static_cast<int64_t>(width);
  if (!pread_all(fd_, raw, static_cast<size_t>(n) * width, at, path_)) {
    throw ShardChanged(changed_message(path_, "shrank"));
  }
  for (int64_t i = n - 1; i >= 0; --i) out[i] = token_at(raw, i, width);
}

uint64_t ShardReader::checksum_file(uint32_t* max_token) const {
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(),
                                                                   XXH3_freeState);
  XXH3_64bits_reset(state.get());
  const size_t width = version_ == 1 ? 2 : 4;
  // 1 MiB chunks: a multiple of both token widths, as is the header, so no token spans two chunks.
  std::vector<uint8_t> buf(1 << 20);
  for (int64_t at = 0; at < bytes_;) {
    const size_t n = static_cast<size_t>(std::min<int64_t>(bytes_ - at, 1 << 20));
    if (!pread_all(fd_, buf.data(), n, at, path_)) throw ShardChanged(changed_message(path_, "shrank"));
    XXH3_64bits_update(state.get(), buf.data(), n);
    const size_t header = at < static_cast<int64_t>(kShardHeaderBytes)
                              ? std::min(n, kShardHeaderBytes - static_cast<size_t>(at))
                              : 0;
    const int64_t tokens = static_cast<int64_t>((n - header) / width);
    for (int64_t i = 0; max_token && i < tokens; ++i) {
      *max_token = std::max(*max_token, token_at(buf.data() + header, i, width));
    }
    at += static_cast<int64_t>(n);
  }
  return XXH3_64bits_digest(state.get());
}

uint32_t ShardReader::scan() {
  check_unchanged();
  uint32_t max_token = 0;
  checksum_ = checksum_file(&max_token);
  scanned_ = true;
  return max_token;
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
  std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
  if (!f) throw std::runtime_error("cannot write " + tmp.string() + ": " + std::strerror(errno));
  f.write(reinterpret_cast<const char*>(header.data()), kShardHeaderBytes);
  if (version == 1) {
    // Never cut to 16 bits: an id that does not fit is a caller's error, not a different token.
    const auto wide = std::find_if(tokens.begin(), tokens.end(), [](uint32_t t) { return t > 65535; });
    if (wide != tokens.end()) {
      throw std::invalid_argument("token " + std::to_string(*wide) + " does not fit a version 1 "
                                  "(uint16) shard: " + path.string());
    }
    std::vector<uint16_t> narrow(tokens.begin(), tokens.end());
    f.write(reinterpret_cast<const char*>(narrow.data()),
            static_cast<std::streamsize>(narrow.size() * 2));
  } else {
    f.write(reinterpret_cast<const char*>(tokens.data()),
            static_cast<std::streamsize>(tokens.size() * 4));
  }
  f.close();  // a full disk may only show when the last buffer is written, here
  if (!f) {
    const int err = errno;
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw std::runtime_error("cannot write shard " + tmp.string() + ": " + std::strerror(err));
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

uint64_t contents_checksum(const std::vector<ShardReader>& shards) {
  std::vector<uint64_t> sums;
  for (const auto& s : shards) sums.push_back(s.checksum());
  return XXH3_64bits(sums.data(), sums.size() * sizeof(uint64_t));
}

}  // namespace attnbench::data
