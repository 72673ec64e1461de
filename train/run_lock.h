// One trainer per run folder: an exclusive advisory lock (flock) on <run>/.lock, held for the
// whole run and released by the kernel when the process dies, however it dies. Two writers on one
// run folder would interleave checkpoints and metrics and silently corrupt the run.
#pragma once
#include <filesystem>

namespace attnbench::train {

class RunLock {
 public:
  // Throws UsageError when another live process holds the run.
  explicit RunLock(const std::filesystem::path& run_dir);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace attnbench::train
