#include "model/checkpoint_dir.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/common/error.h"

namespace attnbench::model {

namespace fs = std::filesystem;

namespace {

constexpr const char* kManifest = "MANIFEST.json";
constexpr const char* kFormat = "attnbench-checkpoint";
constexpr int kFormatVersion = 1;

std::string file_checksum(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    XXH3_64bits_update(state, buf.data(), static_cast<size_t>(in.gcount()));
  }
  uint64_t h = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return fmt::format("{:016x}", h);
}

[[noreturn]] void corrupt(const fs::path& dir, const std::string& what) {
  throw UsageError("checkpoint " + dir.string() + " is incomplete or corrupt: " + what +
                   ". It was not loaded; delete the folder to restart the run from scratch, or "
                   "restore a good copy");
}

}  // namespace

void sync_path(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + path.string() + ": " + std::strerror(errno));
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    throw std::runtime_error("fsync " + path.string() + ": " + std::strerror(err));
  }
  if (::close(fd) != 0) throw std::runtime_error("close " + path.string() + ": " + std::strerror(errno));
}

CheckedFile::CheckedFile(fs::path path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail("open");
}

CheckedFile::~CheckedFile() {
  if (fd_ >= 0) ::close(fd_);
}

void CheckedFile::fail(const char* call) noexcept {
  if (error_.empty()) error_ = std::string(call) + ": " + std::strerror(errno);
}

size_t CheckedFile::write(const void* data, size_t n) noexcept {
  const auto* p = static_cast<const char*>(data);
  for (size_t left = n; error_.empty() && left > 0;) {
    const ssize_t w = ::write(fd_, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) fail("write");
    if (w > 0) p += w, left -= static_cast<size_t>(w);
  }
  return n;
}

void CheckedFile::finish() {
  if (fd_ >= 0 && error_.empty() && ::fsync(fd_) != 0) fail("fsync");
  // close() reports write-back errors of some filesystems (NFS, quotas) that write() did not.
  if (fd_ >= 0 && ::close(fd_) != 0) fail("close");
  fd_ = -1;
  if (!error_.empty()) throw std::runtime_error("cannot write " + path_.string() + " (" + error_ + ")");
}

void write_file_atomic(const fs::path& path, const std::string& text) {
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  try {
    CheckedFile out(tmp);
    out.write(text.data(), text.size());
    out.finish();
    fs::rename(tmp, path);
  } catch (...) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw;
  }
  sync_path(path.parent_path().empty() ? fs::path(".") : path.parent_path());
}

std::optional<fs::path> find_checkpoint(const fs::path& run_dir) {
  for (const char* name : {"checkpoint", "checkpoint.prev"}) {
    fs::path p = run_dir / name;
    if (fs::is_directory(p)) return p;
  }
  return std::nullopt;
}

fs::path stage_checkpoint(const fs::path& run_dir) {
  fs::path staged = run_dir / "checkpoint.tmp";
  fs::remove_all(staged);
  fs::create_directories(staged);
  return staged;
}

void write_manifest(const fs::path& dir, int64_t step) {
  nlohmann::json files = nlohmann::json::object();
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().filename() == kManifest) continue;
    sync_path(e.path());
    files[e.path().filename().string()] = {{"bytes", e.file_size()},
                                           {"xxh3_64", file_checksum(e.path())}};
  }
  nlohmann::json m = {{"format", kFormat}, {"version", kFormatVersion}, {"step", step},
                      {"files", files}};
  write_file_atomic(dir / kManifest, m.dump(2) + "\n");
}

void verify_checkpoint(const fs::path& dir) {
  fs::path mpath = dir / kManifest;
  if (!fs::is_regular_file(mpath)) corrupt(dir, std::string(kManifest) + " is missing");
  nlohmann::json m;
  try {
    std::ifstream in(mpath);
    m = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    corrupt(dir, std::string(kManifest) + " is not valid JSON (" + e.what() + ")");
  }
  // Every value's type is checked before it is read: a manifest of the wrong shape is corrupt like
  // any other, never a raw nlohmann::json error, and a float where a size belongs is never cast.
  if (!m.is_object() || !m.contains("format") || m.at("format") != kFormat ||
      !m.contains("files") || !m.at("files").is_object()) {
    corrupt(dir, std::string(kManifest) + " is not an attnbench checkpoint manifest");
  }
  const nlohmann::json version = m.value("version", nlohmann::json());
  if (!version.is_number_integer() || version.get<int64_t>() != kFormatVersion) {
    corrupt(dir, "manifest version " + version.dump() + ", this attnbench reads version " +
                     std::to_string(kFormatVersion));
  }
  for (auto& [name, info] : m.at("files").items()) {
    // Only files of this folder: a path would check (and trust) a file elsewhere.
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
      corrupt(dir, std::string(kManifest) + " lists '" + name + "', which is not a file name");
    }
    if (!info.is_object() || !info.contains("bytes") || !info.at("bytes").is_number_unsigned() ||
        !info.contains("xxh3_64") || !info.at("xxh3_64").is_string()) {
      corrupt(dir, std::string(kManifest) + " entry " + name +
                       " needs \"bytes\" (a size) and \"xxh3_64\" (a checksum)");
    }
    fs::path p = dir / name;
    if (!fs::is_regular_file(p)) corrupt(dir, name + " is missing");
    auto bytes = info.at("bytes").get<uintmax_t>();
    if (fs::file_size(p) != bytes) {
      corrupt(dir, name + " is " + std::to_string(fs::file_size(p)) + " bytes, the manifest says " +
                       std::to_string(bytes) + " (truncated?)");
    }
    if (file_checksum(p) != info.at("xxh3_64").get<std::string>()) {
      corrupt(dir, name + " does not match its checksum");
    }
  }
}

void publish_checkpoint(const fs::path& run_dir, const fs::path& staged) {
  fs::path current = run_dir / "checkpoint", prev = run_dir / "checkpoint.prev";
  fs::remove_all(prev);
  if (fs::exists(current)) fs::rename(current, prev);
  sync_path(run_dir);
  fs::rename(staged, current);
  sync_path(run_dir);
  fs::remove_all(prev);
}

}  // namespace attnbench::model
