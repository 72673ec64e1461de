// Store: recording a run's results (metrics, evaluations, samples, attention statistics), each call
// one transaction on a run that exists, with a sign of life from its holder.
#include <fmt/format.h>

#include <mutex>

#include "core/common/error.h"
#include "results/sqlite.h"
#include "results/store.h"
#include "results/store_impl.h"

namespace attnbench::results {

void Store::log_metrics(const std::string& run_id, const std::vector<Metric>& metrics) {
  std::lock_guard lock(impl_->mutex);
  Db& db = impl_->db;
  Transaction tx(db);
  impl_->require_run(run_id);
  Stmt s = db.prepare("INSERT INTO metrics(run, key, step, value, time) VALUES (?, ?, ?, ?, ?) "
                      "ON CONFLICT(run, key, step) DO UPDATE SET value = excluded.value, "
                      "time = excluded.time");
  double now = unix_now();
  for (const Metric& m : metrics) {
    s.bind_all(run_id, m.key, m.step, m.value, m.time > 0 ? m.time : now).run();
    s.reset();
  }
  impl_->touch(run_id);
  tx.commit();
}

namespace {
// A stored result is never replaced by a different measurement: the same identity overwrites (a
// re-scoring gives the same numbers), another one is refused naming both, before anything is
// written. Every metric of a task shares its identity, so any stored row of the task decides.
void check_same_identity(Db& db, const std::string& run_id, const EvalRow& e) {
  Stmt s = db.prepare("SELECT item_limit, protocol_version, bos, n FROM evals "
                      "WHERE run = ? AND task = ? LIMIT 1");
  s.bind_all(run_id, e.task);
  if (!s.step()) return;
  const int64_t limit = s.integer(0), n = s.integer(3);
  const std::string protocol = s.text(1), bos = s.text(2);
  if (limit == e.limit && protocol == e.protocol_version && bos == e.bos) return;
  throw UsageError(fmt::format(
      "{}: run {} already holds {} scored with {} (n = {}); this scoring ({}{}) is a different "
      "measurement and would replace it: score into another --db, or with the stored identity",
      db.path().string(), run_id, e.task, eval_identity(limit, protocol, bos), n,
      eval_identity(e.limit, e.protocol_version, e.bos),
      e.n > 0 ? fmt::format(", n = {}", e.n) : ""));
}

// The upserts of record_evals and record_samples, inside the caller's transaction.
void insert_evals(Db& db, const std::string& run_id, const std::vector<EvalRow>& evals) {
  for (const EvalRow& e : evals) check_same_identity(db, run_id, e);
  Stmt s = db.prepare(
      "INSERT INTO evals(run, task, metric, value, stderr, n, item_limit, protocol_version, bos, "
      "time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(run, task, metric) DO UPDATE SET "
      "value = excluded.value, stderr = excluded.stderr, n = excluded.n, "
      "item_limit = excluded.item_limit, protocol_version = excluded.protocol_version, "
      "bos = excluded.bos, time = excluded.time");
  double now = unix_now();
  for (const EvalRow& e : evals) {
    s.bind_all(run_id, e.task, e.metric, e.value, e.std_error, e.n, e.limit, e.protocol_version,
               e.bos, now)
        .run();
    s.reset();
  }
}

void insert_samples(Db& db, const std::string& run_id, const std::vector<Sample>& samples) {
  Stmt s = db.prepare(
      "INSERT INTO samples(run, task, doc, request, loglikelihood, is_greedy, is_gold, tokens, "
      "choice_chars) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(run, task, doc, request) DO "
      "UPDATE SET loglikelihood = excluded.loglikelihood, is_greedy = excluded.is_greedy, "
      "is_gold = excluded.is_gold, tokens = excluded.tokens, choice_chars = excluded.choice_chars");
  for (const Sample& x : samples) {
    s.bind_all(run_id, x.task, x.doc, x.request, x.loglikelihood, x.is_greedy, x.is_gold, x.tokens,
               x.choice_chars)
        .run();
    s.reset();
  }
}
}  // namespace

void Store::require_same_identity(const std::string& run_id, const EvalRow& planned) {
  std::lock_guard lock(impl_->mutex);
  check_same_identity(impl_->db, run_id, planned);
}

void Store::record_evals(const std::string& run_id, const std::vector<EvalRow>& evals) {
  record_task(run_id, evals, {});
}

void Store::record_samples(const std::string& run_id, const std::vector<Sample>& samples) {
  record_task(run_id, {}, samples);
}

void Store::record_task(const std::string& run_id, const std::vector<EvalRow>& evals,
                        const std::vector<Sample>& samples) {
  std::lock_guard lock(impl_->mutex);
  Db& db = impl_->db;
  Transaction tx(db);
  impl_->require_run(run_id);
  insert_evals(db, run_id, evals);
  insert_samples(db, run_id, samples);
  impl_->touch(run_id);
  tx.commit();
}

std::string item_limit_text(int64_t limit) {
  return limit > 0 ? fmt::format("limit {}", limit) : std::string("every item");
}

std::string eval_identity(int64_t limit, const std::string& protocol, const std::string& bos) {
  return fmt::format("{}, protocol {}, bos {}", item_limit_text(limit),
                     protocol.empty() ? "-" : protocol, bos.empty() ? "-" : bos);
}

std::optional<AttnMeasurement> read_attn_measurement(Db& db, const std::string& run_id) {
  Stmt s = db.prepare("SELECT window, tokens, text, detail FROM attn_measurements WHERE run = ?");
  s.bind(1, run_id);
  if (!s.step()) return std::nullopt;
  AttnMeasurement m;
  m.window = s.integer(0);
  m.tokens = s.integer(1);
  m.text = s.text(2);
  m.detail = s.text(3);
  return m;
}

std::string AttnMeasurement::describe() const {
  return fmt::format("windows of {} tokens, {} tokens of {}", window, tokens,
                     text.empty() ? std::string("unnamed text") : text);
}

namespace {
// The stored measurement of the run's attention statistics must be the one being recorded: the
// same text, window and token count (a re-measurement), else the new statistics are refused.
void check_same_measurement(Db& db, const std::string& run_id, const AttnMeasurement& m) {
  const std::optional<AttnMeasurement> stored = read_attn_measurement(db, run_id);
  if (!stored || stored->same_as(m)) return;
  throw UsageError(fmt::format(
      "{}: run {} already holds attention statistics measured on {}; these were measured on {}: "
      "a different measurement, which would replace them: store it in another --db, or measure "
      "as stored",
      db.path().string(), run_id, stored->describe(), m.describe()));
}
}  // namespace

void Store::record_attn_stats(const std::string& run_id, const std::vector<AttnStat>& stats,
                              const std::optional<AttnMeasurement>& measured) {
  std::lock_guard lock(impl_->mutex);
  Db& db = impl_->db;
  Transaction tx(db);
  impl_->require_run(run_id);
  if (measured) {
    check_same_measurement(db, run_id, *measured);
    db.prepare("INSERT INTO attn_measurements(run, window, tokens, text, detail, time) "
               "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(run) DO UPDATE SET detail = excluded.detail, "
               "time = excluded.time")
        .bind_all(run_id, measured->window, measured->tokens, measured->text, measured->detail,
                  unix_now())
        .run();
  }
  Stmt s = db.prepare("INSERT INTO attn_stats(run, layer, head, stat, idx, value, learned) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(run, layer, head, stat, idx) "
                      "DO UPDATE SET value = excluded.value, learned = excluded.learned");
  for (const AttnStat& a : stats) {
    s.bind_all(run_id, a.layer, a.head, a.stat, a.index, a.value, a.learned).run();
    s.reset();
  }
  impl_->touch(run_id);
  tx.commit();
}

}  // namespace attnbench::results
