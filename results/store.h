// The results store (docs/results.md): one SQLite database holding sweeps, runs, their flattened
// configs, training curves, eval metrics, attention statistics and per-item samples.
//
// Guarantees:
// - WAL mode, 30 s busy timeout, foreign keys on; the schema version lives in PRAGMA user_version
//   and opening an older database upgrades it (results/schema.cpp); a newer one is refused, and
//   so is a file that is not an attnbench database (never written into).
// - Every method that writes is ONE transaction: a process killed at any moment leaves either all
//   or none of that write (e.g. all eval metrics of a task, a batch of training metrics, a status
//   change with its timestamps).
// - Re-logging a (run, key, step) metric, a (run, task, metric) eval, ... replaces the row (upsert),
//   so a resumed run never duplicates anything.
// - claim_run is atomic across connections and processes: exactly one claimer may run a cell.
//
// A Store is one connection; it serialises its own calls (a mutex), so threads may share one, but
// each process must open its own (never use a Store across fork()).
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "results/rows.h"

namespace attnbench::results {

class Db;  // results/sqlite.h: the connection wrapper the query code uses

enum class RunStatus { Pending, Running, Finished, Failed, Diverged, Interrupted };
const char* to_string(RunStatus s);            // "pending", "running", ...
RunStatus parse_status(const std::string& s);  // UsageError listing the valid names

// Where and how a run ran (recorded at every claim: a resumed run records its latest machine).
struct RunMetadata {
  std::string git_revision;
  std::string device;  // "cpu", "cuda:0 (NVIDIA H100)", ...
  std::string blas;    // path of the BLAS library loaded
  int64_t threads = 0;
  std::string attnbench_version;
  std::string torch_version;
  // The host is taken from gethostname() by the store itself (it is also the claim's owner).
};

struct RunInfo {
  std::string id;
  std::string sweep;  // the sweep that created it ("" for a standalone run)
  std::string cell;   // the cell's label in that sweep
  RunStatus status = RunStatus::Pending;
  std::string config_json;
  std::string created, started, finished;  // ISO 8601 UTC; "" when not yet
  std::string error;
  std::string git_revision, host, device, blas;
  int64_t threads = 0;
  std::string attnbench_version, torch_version;
  std::string owner;      // "host:pid" of the claim holder while running
  double heartbeat = 0;   // Unix seconds of the holder's last sign of life
};

struct ClaimOptions {
  bool retry_failed = false;    // failed runs are claimed again only when asked (--retry-failed)
  bool retry_diverged = false;  // likewise diverged runs
  // A running claim whose holder shows no sign of life for this long is stale and may be taken
  // over. On the same host a holder whose pid no longer exists is stale at once.
  double stale_after_s = 900;
};

// A run as a sweep lists it and a claim records it; built field by field.
struct PendingRun {
  std::string id;
  std::string cell;         // the cell's label in its sweep ("" outside a sweep)
  std::string config_json;  // canonical JSON of the resolved config
  std::vector<Param> params;
};

struct ClaimResult {
  bool claimed = false;      // this Store now holds the run (status running): run it
  RunStatus previous = RunStatus::Pending;  // status before this call (Pending for a new run)
  bool existed = false;      // the run was already in the database (resume from its checkpoint)
  std::string holder;        // when not claimed because it is running: "host:pid" of the holder
};

struct RunFilter {
  std::string sweep;                  // "" = all
  std::optional<RunStatus> status;    // nullopt = all
};

class Store {
 public:
  // Opens (creating and migrating when read_only is false) the database at `db`; its parent folder
  // is created. read_only: SQLITE_OPEN_READONLY + PRAGMA query_only; the file must exist and have
  // the current schema version, and nothing is ever created or written (it works on read-only
  // media: results/sqlite.h). Either way, another application's database, a text file or an
  // incomplete schema is an InputError naming the file.
  static Store open(const std::filesystem::path& db, bool read_only = false);
  // Read-only, for a plan of what a writer will find: nullopt when there is no file or an empty
  // database (no tables yet: a writer creates them, and a concurrent one may be doing so right
  // now); otherwise as open(db, true).
  static std::optional<Store> open_if_results(const std::filesystem::path& db);
  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  const std::filesystem::path& path() const;

  // Records a sweep (name unique; the file is updated if it moved).
  void upsert_sweep(const std::string& name, const std::string& file);

  // Records the runs of a sweep that the database does not have yet as pending members of `sweep`,
  // in the given order, in one transaction (runs it has already are left as they are, membership
  // added). The sweep runner lists every cell this way before running any, so that the store shows
  // what is still to do and tables list cells in the sweep file's order, not in the order in which
  // parallel or resumed runs happened to start.
  void add_pending_runs(const std::string& sweep, const std::vector<PendingRun>& runs);
  // Takes the runs out of the sweep (its tables, report and listings), in one transaction. Their
  // rows (config, metrics, evals, samples, statistics) stay, as does their membership of any other
  // sweep: `sweep --prune` for runs an edited sweep file no longer lists.
  void remove_from_sweep(const std::string& sweep, const std::vector<std::string>& run_ids);

  // Atomically decides whether this Store may run `run.id`, and if so marks it running under this
  // Store's owner (host:pid) with a fresh heartbeat, records its metadata and adds it to `sweep`
  // (if non-empty) as `run.cell`. Claimed when the run is new, pending, interrupted, a stale
  // running claim, or failed/diverged with the matching retry option. Finished runs and runs held
  // by a live owner (including this Store itself) are never claimed. The config and params are
  // written once: with a new run's row, or when a claimed run's stored config differs (its
  // execution-only keys, e.g. the device, are this claimer's).
  ClaimResult claim_run(const std::string& sweep, const PendingRun& run,
                        const RunMetadata& metadata, const ClaimOptions& options = {});

  // Refreshes this Store's heartbeat on a run it holds (the runner calls it periodically; every
  // log_metrics / record_* call on a held run refreshes it too).
  void heartbeat(const std::string& run_id);

  // Status change with its timestamps, one transaction: running sets started (first time only);
  // finished/failed/diverged/interrupted set finished; `error` is stored (cleared when empty).
  void set_status(const std::string& run_id, RunStatus status, const std::string& error = "");

  // Each call is one transaction; rows are upserted on their natural key. An evaluation row is
  // never replaced by a different measurement: a task of the run stored with another identity
  // (item limit, protocol, BOS policy; the name carries the context, task@N) makes record_evals
  // and record_task throw a UsageError naming both, before anything is written.
  // require_same_identity checks one task ahead of the scoring (attnbench eval's preflight).
  void require_same_identity(const std::string& run_id, const EvalRow& planned);
  void log_metrics(const std::string& run_id, const std::vector<Metric>& metrics);
  void record_evals(const std::string& run_id, const std::vector<EvalRow>& evals);
  // A run's attention statistics with how they were measured (nullopt: not recorded, as before
  // schema version 4). Statistics measured otherwise than the stored ones are refused naming both
  // (a UsageError), before anything is written; the same measurement is replaced in place.
  void record_attn_stats(const std::string& run_id, const std::vector<AttnStat>& stats,
                         const std::optional<AttnMeasurement>& measured = std::nullopt);
  void record_samples(const std::string& run_id, const std::vector<Sample>& samples);
  // A scored task's metrics and per-request samples in one transaction: a task whose metrics are
  // stored also has its samples (paired tests read them, results/compare.h).
  void record_task(const std::string& run_id, const std::vector<EvalRow>& evals,
                   const std::vector<Sample>& samples);

  // Queries.
  // The file a sweep was last run from, as given then (upsert_sweep); nullopt for no such sweep.
  std::optional<std::string> sweep_file(const std::string& sweep);
  std::optional<RunInfo> run(const std::string& run_id);
  std::vector<RunInfo> runs(const RunFilter& filter = {});
  std::vector<Param> params(const std::string& run_id);
  std::vector<Metric> metrics(const std::string& run_id, const std::string& key);  // by step
  std::vector<EvalRow> evals(const std::string& run_id);
  bool has_attn_stats(const std::string& run_id);  // whether any attention statistic is stored
  // How the run's attention statistics were measured; nullopt when not recorded.
  std::optional<AttnMeasurement> attn_measurement(const std::string& run_id);

  // This Store's claim owner, "host:pid".
  const std::string& owner() const;

  // The connection, for the query and merge code in results/ (results/sqlite.h). Calls through it
  // bypass the Store's mutex: use it from one thread at a time.
  Db& db();

 private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The database path: `cli_db` if given (--db), else $ATTNBENCH_DB, else runs/attnbench.db.
std::filesystem::path default_db_path(const std::string& cli_db = "");

// The stored measurement of a run's attention statistics (attn_measurements, schema version 4: the
// caller checks the version); nullopt when none is recorded. Store::attn_measurement, the report
// and the table read it here.
std::optional<AttnMeasurement> read_attn_measurement(Db& db, const std::string& run_id);

}  // namespace attnbench::results
