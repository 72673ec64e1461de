// The on-disk life of a checkpoint folder, independent of what is in it (docs/training.md):
//   <run>/checkpoint/        the current checkpoint: its files plus MANIFEST.json, written last,
//                            with every file's size and XXH3-64 checksum
//   <run>/checkpoint.tmp/    a new checkpoint being written
//   <run>/checkpoint.prev/   the previous checkpoint, for the instant between two renames
// A new checkpoint is staged completely (files, fsync, manifest) before it replaces the current one,
// so a kill at any moment leaves one complete checkpoint. A checkpoint whose manifest is missing or
// disagrees with its files is reported, never loaded.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace attnbench::model {

// The complete checkpoint of `run_dir`: checkpoint/, else checkpoint.prev/ (left by a kill between
// the two renames of publish_checkpoint), else nothing.
std::optional<std::filesystem::path> find_checkpoint(const std::filesystem::path& run_dir);

// An empty checkpoint.tmp/ in `run_dir` (a stale one from an interrupted write is removed).
std::filesystem::path stage_checkpoint(const std::filesystem::path& run_dir);

// Writes MANIFEST.json for the files in `dir` (fsyncs each, then the manifest and the folder).
void write_manifest(const std::filesystem::path& dir, int64_t step);

// Checks `dir` against its manifest: every listed file present with the recorded size and checksum.
// Throws UsageError naming the checkpoint and the first problem.
void verify_checkpoint(const std::filesystem::path& dir);

// Makes the staged folder the current checkpoint: checkpoint -> checkpoint.prev, staged ->
// checkpoint, then removes checkpoint.prev.
void publish_checkpoint(const std::filesystem::path& run_dir, const std::filesystem::path& staged);

// A file written for a checkpoint, where a full disk must be a clean error (docs/training.md,
// "Faults"): every write, the fsync and the close are checked, and the first failure is kept and
// thrown by finish() as a runtime error naming the file and the cause (e.g. "No space left on
// device"). write() never fails itself, so a writer that cannot handle errors mid-way (a torch
// archive) is fed to the end and the failure reported after it.
class CheckedFile {
 public:
  explicit CheckedFile(std::filesystem::path path);  // created, or truncated
  ~CheckedFile();
  CheckedFile(const CheckedFile&) = delete;
  CheckedFile& operator=(const CheckedFile&) = delete;

  // Appends `n` bytes (nothing more once a write has failed); returns n.
  size_t write(const void* data, size_t n) noexcept;
  // fsync and close; throws std::runtime_error for the first failure of any call on this file.
  void finish();

 private:
  void fail(const char* call) noexcept;
  std::filesystem::path path_;
  int fd_ = -1;
  std::string error_;  // the first failure: "write: No space left on device"
};

// Writes `text` to `path` through a temporary file in the same folder, fsync and rename. On failure
// the temporary file is removed and `path` is as it was.
void write_file_atomic(const std::filesystem::path& path, const std::string& text);

// Flushes a file or folder to disk (fsync).
void sync_path(const std::filesystem::path& path);

}  // namespace attnbench::model
