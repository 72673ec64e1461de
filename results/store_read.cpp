// Store: reading runs and their rows back.
#include <limits>
#include <mutex>

#include "results/schema.h"
#include "results/sqlite.h"
#include "results/store.h"
#include "results/store_impl.h"

namespace attnbench::results {

namespace {

RunInfo read_run(Stmt& s) {
  RunInfo r;
  int c = 0;
  r.id = s.text(c++);
  r.sweep = s.text(c++);
  r.cell = s.text(c++);
  r.status = parse_status(s.text(c++));
  r.config_json = s.text(c++);
  r.created = s.text(c++);
  r.started = s.text(c++);
  r.finished = s.text(c++);
  r.error = s.text(c++);
  r.git_revision = s.text(c++);
  r.host = s.text(c++);
  r.device = s.text(c++);
  r.blas = s.text(c++);
  r.threads = s.integer(c++);
  r.attnbench_version = s.text(c++);
  r.torch_version = s.text(c++);
  std::string owner_host = s.text(c++);
  int64_t owner_pid = s.integer(c++);
  if (!owner_host.empty()) r.owner = owner_host + ":" + std::to_string(owner_pid);
  r.heartbeat = s.real(c++);
  return r;
}

const char* kRunColumns =
    "id, sweep, cell, status, config, created, started, finished, error, git_revision, host, "
    "device, blas, threads, attnbench_version, torch_version, owner_host, owner_pid, heartbeat";

}  // namespace

std::optional<RunInfo> Store::run(const std::string& run_id) {
  std::lock_guard lock(impl_->mutex);
  Stmt s = impl_->db.prepare(std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?");
  s.bind(1, run_id);
  if (!s.step()) return std::nullopt;
  return read_run(s);
}

std::vector<RunInfo> Store::runs(const RunFilter& filter) {
  std::lock_guard lock(impl_->mutex);
  // Fixed SQL; the filters are bound (an empty value disables its condition).
  Stmt s = impl_->db.prepare(
      std::string("SELECT ") + kRunColumns +
      " FROM runs WHERE (?1 = '' OR id IN (SELECT run FROM sweep_runs WHERE sweep = ?1)) "
      "AND (?2 = '' OR status = ?2) ORDER BY created, rowid");
  s.bind(1, filter.sweep).bind(2, std::string(filter.status ? to_string(*filter.status) : ""));
  std::vector<RunInfo> out;
  while (s.step()) out.push_back(read_run(s));
  return out;
}

std::vector<Param> Store::params(const std::string& run_id) {
  std::lock_guard lock(impl_->mutex);
  Stmt s = impl_->db.prepare("SELECT key, value, type FROM params WHERE run = ? ORDER BY key");
  s.bind(1, run_id);
  std::vector<Param> out;
  while (s.step()) out.push_back({s.text(0), s.text(1), s.text(2)});
  return out;
}

std::vector<Metric> Store::metrics(const std::string& run_id, const std::string& key) {
  std::lock_guard lock(impl_->mutex);
  Stmt s = impl_->db.prepare(
      "SELECT step, value, time FROM metrics WHERE run = ? AND key = ? ORDER BY step");
  s.bind_all(run_id, key);
  std::vector<Metric> out;
  while (s.step()) {
    out.push_back({key, s.integer(0),
                   s.is_null(1) ? std::numeric_limits<double>::quiet_NaN() : s.real(1), s.real(2)});
  }
  return out;
}

std::vector<EvalRow> Store::evals(const std::string& run_id) {
  std::lock_guard lock(impl_->mutex);
  Stmt s = impl_->db.prepare(
      "SELECT task, metric, value, stderr, n, item_limit, protocol_version, bos FROM evals "
      "WHERE run = ? ORDER BY rowid");
  s.bind(1, run_id);
  std::vector<EvalRow> out;
  while (s.step()) {
    out.push_back({s.text(0), s.text(1), s.real(2), s.optional_real(3), s.integer(4),
                   s.integer(5), s.text(6), s.text(7)});
  }
  return out;
}

std::optional<std::string> Store::sweep_file(const std::string& sweep) {
  std::lock_guard lock(impl_->mutex);
  Stmt s = impl_->db.prepare("SELECT file FROM sweeps WHERE name = ?");
  s.bind(1, sweep);
  if (!s.step()) return std::nullopt;
  return s.text(0);
}

std::optional<AttnMeasurement> Store::attn_measurement(const std::string& run_id) {
  std::lock_guard lock(impl_->mutex);
  if (schema_version(impl_->db) < 4) return std::nullopt;  // a read-only open of an older file
  return read_attn_measurement(impl_->db, run_id);
}

bool Store::has_attn_stats(const std::string& run_id) {
  std::lock_guard lock(impl_->mutex);
  Stmt s = impl_->db.prepare("SELECT 1 FROM attn_stats WHERE run = ? LIMIT 1");
  s.bind(1, run_id);
  return s.step();
}

}  // namespace attnbench::results
