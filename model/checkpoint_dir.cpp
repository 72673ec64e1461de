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
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw std::runtime_error("cannot open " + path.string() + ": " + std::strerror(errno));
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw std::runtime_error("fsync " + path.string() + ": " + std::strerror(errno));
}

void write_file_atomic(const fs::path& path, const std::string& text) {
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  sync_path(tmp);
  fs::rename(tmp, path);
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
  if (m.value("format", "") != kFormat || !m.contains("files") || !m["files"].is_object()) {
    corrupt(dir, std::string(kManifest) + " is not an attnbench checkpoint manifest");
  }
  if (m.value("version", 0) != kFormatVersion) {
    corrupt(dir, "manifest version " + m["version"].dump() + ", this attnbench reads version " +
                     std::to_string(kFormatVersion));
  }
  for (auto& [name, info] : m["files"].items()) {
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
