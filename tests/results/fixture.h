// Shared helpers for the results tests: a scratch folder per test and a plain run recorder.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "results/store.h"

namespace attnbench::results::testing {

// A fresh, empty folder under the system temp dir, removed when the object goes away.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("attnbench-results-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline RunMetadata test_metadata() {
  RunMetadata m;
  m.git_revision = "abc1234";
  m.device = "cpu";
  m.blas = "/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3";
  m.threads = 2;
  m.attnbench_version = "0.1.0";
  m.torch_version = "1.13.1";
  return m;
}

// Claims `id` in `sweep` with the given params (all strings unless typed) and marks it `status`.
// A run named `id`, its cell label `id` too, and a config of its own.
inline PendingRun pending(const std::string& id, const std::string& cell = "",
                          const std::string& config_json = "",
                          const std::vector<Param>& params = {}) {
  PendingRun run;
  run.id = id;
  run.cell = cell;
  run.config_json = config_json.empty() ? "{\"id\":\"" + id + "\"}" : config_json;
  run.params = params;
  return run;
}

inline void add_run(Store& store, const std::string& sweep, const std::string& id,
                    const std::vector<Param>& params, RunStatus status = RunStatus::Finished) {
  store.claim_run(sweep, pending(id, id, "", params), test_metadata());
  if (status != RunStatus::Running) store.set_status(id, status);
}

inline EvalRow eval(const std::string& task, const std::string& metric, double value,
                    std::optional<double> std_error = std::nullopt) {
  EvalRow e;
  e.task = task;
  e.metric = metric;
  e.value = value;
  e.std_error = std_error;
  e.n = 100;
  e.protocol_version = "1";
  e.bos = "none";
  return e;
}

// How attention statistics were measured: `tokens` tokens of `text` in windows of `window`.
inline AttnMeasurement measured(int64_t window, int64_t tokens, const std::string& text) {
  AttnMeasurement m;
  m.window = window;
  m.tokens = tokens;
  m.text = text;
  return m;
}

}  // namespace attnbench::results::testing
