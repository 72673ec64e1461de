// Store's state, shared by the files that implement it: store.cpp (opening, the run lifecycle),
// store_records.cpp (a run's results), store_read.cpp (reads). Not part of the API: results/store.h.
#pragma once
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>

#include "results/sqlite.h"
#include "results/store.h"

namespace attnbench::results {

struct Store::Impl {
  Impl(const std::filesystem::path& p, bool ro);
  Db db;
  std::mutex mutex;  // one connection: calls from several threads take turns
  std::string host;
  int64_t pid;
  std::string owner;  // "host:pid"

  // Throws when the run does not exist: writes to an unknown run are a caller bug, and SQLite's
  // "FOREIGN KEY constraint failed" would not say which run.
  void require_run(const std::string& run_id);
  // A sign of life on a run this process holds.
  void touch(const std::string& run_id);
  void add_sweep(const std::string& sweep);
  void add_membership(const std::string& run_id, const std::string& sweep, const std::string& cell);
  // Whether `run_id` may be claimed, from its row (none: a new run); its stored config in *config.
  ClaimResult decide_claim(const std::string& run_id, const ClaimOptions& options, std::string* config);
  // A running claim may be taken over when its holder is gone: on this host, its pid no longer
  // exists; anywhere, it has not shown a sign of life for stale_after_s.
  bool stale(const std::string& holder_host, int64_t holder_pid, double heartbeat, double stale_after_s);
};

// Seconds since the Unix epoch (heartbeats, metric times).
double unix_now();

}  // namespace attnbench::results
