#include "results/store.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "core/common/error.h"
#include "results/schema.h"
#include "results/sqlite.h"
#include "results/store_impl.h"

namespace attnbench::results {

namespace {

const char* const kStatusNames[] = {"pending",  "running",  "finished",
                                    "failed",   "diverged", "interrupted"};

// ISO 8601 UTC with milliseconds: sorts as text, orders runs created within one second.
std::string iso_now() {
  using namespace std::chrono;
  auto now = system_clock::now();
  std::time_t t = system_clock::to_time_t(now);
  auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return std::string(buf) + "." + std::to_string(1000 + ms).substr(1) + "Z";
}

std::string host_name() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// kill(pid, 0) probes existence without signalling; EPERM means it exists under another user.
bool pid_alive(int64_t pid) {
  if (pid <= 0) return false;
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

bool terminal(RunStatus s) {
  return s == RunStatus::Finished || s == RunStatus::Failed || s == RunStatus::Diverged ||
         s == RunStatus::Interrupted;
}

// Switching to WAL needs a moment of exclusive access; a second process creating the same file at
// the same instant can get SQLITE_BUSY without the busy handler being consulted, so retry briefly.
// Only that is retried: any other failure (a damaged file, a read-only folder) is reported at once.
void enable_wal(Db& db) {
  std::string mode;
  for (int attempt = 0;; ++attempt) {
    try {
      Stmt s = db.prepare("PRAGMA journal_mode = WAL");
      s.step();
      mode = s.text(0);
      break;
    } catch (const SqliteError& e) {
      if (!e.busy() || attempt >= 50) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  if (mode != "wal") {
    throw std::runtime_error(db.path().string() + ": cannot enable WAL mode (journal_mode " + mode +
                             "); is it on a network file system?");
  }
}

}  // namespace

double unix_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

const char* to_string(RunStatus s) { return kStatusNames[static_cast<int>(s)]; }

RunStatus parse_status(const std::string& s) {
  for (int i = 0; i < 6; ++i) {
    if (s == kStatusNames[i]) return static_cast<RunStatus>(i);
  }
  std::vector<std::string> names(std::begin(kStatusNames), std::end(kStatusNames));
  throw UsageError("unknown run status '" + s + "'" + did_you_mean(s, names) +
                   "; valid: " + join(names));
}

std::filesystem::path default_db_path(const std::string& cli_db) {
  if (!cli_db.empty()) return cli_db;
  if (const char* env = std::getenv("ATTNBENCH_DB"); env && *env) return env;
  return std::filesystem::path("runs") / "attnbench.db";
}

Store::Impl::Impl(const std::filesystem::path& p, bool ro)
    : db(p, ro), host(host_name()), pid(getpid()), owner(host + ":" + std::to_string(pid)) {}

void Store::Impl::require_run(const std::string& run_id) {
  Stmt s = db.prepare("SELECT 1 FROM runs WHERE id = ?");
  s.bind(1, run_id);
  if (!s.step()) {
    throw std::runtime_error(db.path().string() + ": no run '" + run_id +
                             "' (claim_run must record it first)");
  }
}

void Store::Impl::touch(const std::string& run_id) {
  db.prepare("UPDATE runs SET heartbeat = ? WHERE id = ? AND status = 'running' "
             "AND owner_host = ? AND owner_pid = ?")
      .bind_all(unix_now(), run_id, host, pid)
      .run();
}

void Store::Impl::add_sweep(const std::string& sweep) {
  if (sweep.empty()) return;
  db.prepare("INSERT INTO sweeps(name, file, created) VALUES (?, '', ?) "
             "ON CONFLICT(name) DO NOTHING")
      .bind_all(sweep, iso_now())
      .run();
}

void Store::Impl::add_membership(const std::string& run_id, const std::string& sweep, const std::string& cell) {
  if (sweep.empty()) return;
  db.prepare("INSERT INTO sweep_runs(sweep, run, cell) VALUES (?, ?, ?) "
             "ON CONFLICT(sweep, run) DO UPDATE SET cell = excluded.cell")
      .bind_all(sweep, run_id, cell)
      .run();
}

ClaimResult Store::Impl::decide_claim(const std::string& run_id, const ClaimOptions& options,
                         std::string* config) {
  ClaimResult result;
  Stmt s = db.prepare(
      "SELECT status, owner_host, owner_pid, heartbeat, config FROM runs WHERE id = ?");
  s.bind(1, run_id);
  if (!s.step()) {
    result.claimed = true;
    return result;
  }
  result.existed = true;
  result.previous = parse_status(s.text(0));
  *config = s.text(4);
  switch (result.previous) {
    case RunStatus::Pending:
    case RunStatus::Interrupted: result.claimed = true; break;
    case RunStatus::Finished: break;
    case RunStatus::Failed: result.claimed = options.retry_failed; break;
    case RunStatus::Diverged: result.claimed = options.retry_diverged; break;
    case RunStatus::Running:
      result.claimed = stale(s.text(1), s.integer(2), s.real(3), options.stale_after_s);
      if (!result.claimed) result.holder = s.text(1) + ":" + std::to_string(s.integer(2));
      break;
  }
  return result;
}

bool Store::Impl::stale(const std::string& holder_host, int64_t holder_pid, double heartbeat,
           double stale_after_s) {
  if (holder_host == host && holder_pid == pid) return false;  // this process: alive by definition
  if (holder_host == host && !pid_alive(holder_pid)) return true;
  return unix_now() - heartbeat > stale_after_s;
}

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

std::optional<Store> Store::open_if_results(const std::filesystem::path& db) {
  if (!std::filesystem::exists(db)) return std::nullopt;
  auto impl = std::make_unique<Impl>(db, /*read_only=*/true);
  if (schema_version(impl->db) == 0) return std::nullopt;
  require_current_schema(impl->db);
  return Store(std::move(impl));
}

Store Store::open(const std::filesystem::path& db, bool read_only) {
  if (!read_only && db.has_parent_path()) std::filesystem::create_directories(db.parent_path());
  auto impl = std::make_unique<Impl>(db, read_only);
  if (read_only) {
    require_current_schema(impl->db);
  } else {
    inspect_schema(impl->db);  // refuses another application's database before anything is written
    enable_wal(impl->db);
    // WAL + synchronous NORMAL: a killed process never loses a committed transaction nor leaves a
    // partial one; only a power loss may drop the last few commits (still consistent).
    impl->db.exec("PRAGMA synchronous = NORMAL");
    migrate(impl->db);
  }
  return Store(std::move(impl));
}

const std::filesystem::path& Store::path() const { return impl_->db.path(); }
const std::string& Store::owner() const { return impl_->owner; }
Db& Store::db() { return impl_->db; }

void Store::upsert_sweep(const std::string& name, const std::string& file) {
  std::lock_guard lock(impl_->mutex);
  impl_->db.prepare("INSERT INTO sweeps(name, file, created) VALUES (?, ?, ?) "
                    "ON CONFLICT(name) DO UPDATE SET file = excluded.file")
      .bind_all(name, file, iso_now())
      .run();
}

void Store::add_pending_runs(const std::string& sweep, const std::vector<PendingRun>& runs) {
  std::lock_guard lock(impl_->mutex);
  Db& db = impl_->db;
  Transaction tx(db);
  impl_->add_sweep(sweep);
  Stmt ins = db.prepare("INSERT INTO runs(id, sweep, cell, status, config, created) "
                        "VALUES (?, NULLIF(?, ''), ?, 'pending', ?, ?) ON CONFLICT(id) DO NOTHING");
  Stmt param = db.prepare("INSERT INTO params(run, key, value, type) VALUES (?, ?, ?, ?) "
                          "ON CONFLICT(run, key) DO NOTHING");
  for (const PendingRun& r : runs) {
    ins.bind_all(r.id, sweep, r.cell, r.config_json, iso_now()).run();
    ins.reset();
    const bool added = db.changes() > 0;  // else the run existed, and its params are its own
    impl_->add_membership(r.id, sweep, r.cell);
    if (!added) continue;
    for (const Param& p : r.params) {
      param.bind_all(r.id, p.key, p.value, p.type).run();
      param.reset();
    }
  }
  tx.commit();
}

void Store::remove_from_sweep(const std::string& sweep, const std::vector<std::string>& run_ids) {
  std::lock_guard lock(impl_->mutex);
  Transaction tx(impl_->db);
  Stmt del = impl_->db.prepare("DELETE FROM sweep_runs WHERE sweep = ? AND run = ?");
  for (const std::string& id : run_ids) {
    del.bind_all(sweep, id).run();
    del.reset();
  }
  tx.commit();
}

ClaimResult Store::claim_run(const std::string& sweep, const PendingRun& run,
                             const RunMetadata& metadata, const ClaimOptions& options) {
  std::lock_guard lock(impl_->mutex);
  Db& db = impl_->db;
  Transaction tx(db);  // IMMEDIATE: the read-decide-write below is atomic across processes
  std::string stored_config;
  const ClaimResult result = impl_->decide_claim(run.id, options, &stored_config);
  // Membership is recorded even when not claimed: a run shared with another sweep (same config,
  // same id) belongs to this sweep's table too.
  impl_->add_sweep(sweep);  // before the run row, which references it
  if (!result.existed) {
    db.prepare("INSERT INTO runs(id, sweep, cell, status, config, created) "
               "VALUES (?, NULLIF(?, ''), ?, 'pending', ?, ?)")
        .bind_all(run.id, sweep, run.cell, run.config_json, iso_now())
        .run();
  }
  impl_->add_membership(run.id, sweep, run.cell);
  if (result.existed && !result.claimed) {
    tx.commit();
    return result;
  }
  db.prepare("UPDATE runs SET status = 'running', started = COALESCE(started, ?), "
             "finished = NULL, error = NULL, git_revision = ?, host = ?, device = ?, blas = ?, "
             "threads = ?, attnbench_version = ?, torch_version = ?, owner_host = ?, "
             "owner_pid = ?, heartbeat = ?, attempts = attempts + 1 WHERE id = ?")
      .bind_all(iso_now(), metadata.git_revision, impl_->host, metadata.device, metadata.blas,
                metadata.threads, metadata.attnbench_version, metadata.torch_version,
                impl_->host, impl_->pid, unix_now(), run.id)
      .run();
  // The params are the config's, flattened: both change together or not at all. A new run's
  // config went in with its row.
  if (!result.existed || stored_config != run.config_json) {
    if (result.existed) {
      db.prepare("UPDATE runs SET config = ? WHERE id = ?").bind_all(run.config_json, run.id).run();
      db.prepare("DELETE FROM params WHERE run = ?").bind(1, run.id).run();
    }
    Stmt ins = db.prepare("INSERT INTO params(run, key, value, type) VALUES (?, ?, ?, ?)");
    for (const Param& p : run.params) {
      ins.bind_all(run.id, p.key, p.value, p.type).run();
      ins.reset();
    }
  }
  tx.commit();
  return result;
}

void Store::heartbeat(const std::string& run_id) {
  std::lock_guard lock(impl_->mutex);
  impl_->touch(run_id);
}

void Store::set_status(const std::string& run_id, RunStatus status, const std::string& error) {
  std::lock_guard lock(impl_->mutex);
  Db& db = impl_->db;
  Transaction tx(db);
  impl_->require_run(run_id);
  std::string now = iso_now();
  db.prepare("UPDATE runs SET status = ?, error = NULLIF(?, ''), "
             "started = CASE WHEN ? THEN COALESCE(started, ?) ELSE started END, "
             "finished = CASE WHEN ? THEN ? ELSE NULL END, "
             "heartbeat = ? WHERE id = ?")
      .bind_all(std::string(to_string(status)), error, status == RunStatus::Running, now,
                terminal(status), now, unix_now(), run_id)
      .run();
  tx.commit();
}

}  // namespace attnbench::results
