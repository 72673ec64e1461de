#include "harness/sweep/cell_run.h"

#include "evals/diagnostics/model_diagnostics.h"
#include "evals/diagnostics/text_source.h"
#include "evals/eval_plan.h"
#include "evals/diagnostics/training_probe.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "core/common/error.h"
#include "core/common/memory.h"
#include "core/common/periodic.h"
#include "core/common/stop_signal.h"
#include "harness/sweep/store_sink.h"
#include "train/run_lock.h"
#include "train/trainer.h"
#include "core/data/hf_tokenizer.h"
#include "model/checkpoint_model.h"
#include "model/pretrained/hf_folder.h"
#include "model/pretrained/pretrained_lm.h"
#include "model/device.h"

namespace attnbench::sweep {
namespace {

using results::RunStatus;

// Keeps the claim alive while a long step or evaluation writes nothing (store.h: a holder silent
// for ClaimOptions::stale_after_s on another host may be taken over).
PeriodicWorker claim_heartbeat(results::Store& store, const std::string& run_id) {
  return PeriodicWorker(std::chrono::seconds(kHeartbeatIntervalS), [&store, run_id] {
    try {
      store.heartbeat(run_id);
    } catch (const std::exception&) {
      // A busy database delays one beat; the next one or any metric write refreshes it.
    }
    return true;
  });
}

std::vector<results::Param> params_of(const config::RunConfig& cfg) {
  std::vector<results::Param> out;
  for (auto& [key, value] : config::flatten(cfg)) {
    out.push_back({key, config::to_string(value), config::type_name(config::type_of(value))});
  }
  return out;
}

void say(const std::string& id, const std::string& label, const std::string& what) {
  fmt::print("[{}] {}: {}\n", id, label, what);
  std::fflush(stdout);
}

void say(const Cell& cell, const std::string& what) { say(cell.id, cell.label, what); }

// Scores the tasks the store lacks for run `id`; false when Ctrl-C stopped it between tasks.
bool evaluate_missing(const std::string& id, const std::string& label,
                      const config::EvalConfig& eval, results::Store& store,
                      const evals::ScoredModel& scored, const std::vector<std::string>& tasks,
                      const CellRunOptions& o) {
  if (tasks.empty()) return true;
  say(id, label, "evaluating " + join(tasks));
  // The plan `attnbench eval` builds for the same run (evals/eval_plan.h): the same rows stored.
  evals::EvalRequest request;
  request.tasks = tasks;
  std::vector<evals::EvalGroup> plan = evals::plan_evaluation(scored, eval, request, o.data_root);
  evals::EvalOptions options = evals::evaluation_options(scored, eval);
  options.progress = o.quiet ? nullptr : stderr;
  options.log_samples = true;  // one row per request: a few MB per run, what paired tests need
  return evals::run_evaluation(
      plan, evals::text_encoder(scored.tokenizer()), options,
      [&](const evals::LoadedTask& task, const evals::TaskReport& report) {
        store.record_task(id, evals::eval_rows(report, task.limit, options.bos), evals::sample_rows(report));
      },
      [] { return stop_requested(); });
}

bool evaluate_missing(const Cell& cell, results::Store& store, const evals::ScoredModel& scored,
                      const std::vector<std::string>& tasks, const CellRunOptions& o) {
  return evaluate_missing(cell.id, cell.label, cell.config.eval, store, scored, tasks, o);
}

// Sink mass and sparsity (docs/diagnostics.md, "What is measured") of `scored` on held-out text,
// for the sweep table's diagnostics columns; stored as run `id`'s with how they were measured (a
// different stored measurement is refused, results/store.h). `opts` says the windows (and a Mask@k
// run's fixed token); eval.attention_tokens the tokens read. Progress lines every 10 s unless
// quiet; false when Ctrl-C or SIGTERM stopped it between two batches (nothing stored).
bool measure_attention(const std::string& id, const std::string& label, results::Store& store,
                       const evals::ScoredModel& scored, const evals::diagnostics::TextSource& source,
                       evals::diagnostics::DiagnosticsOptions opts, const config::EvalConfig& eval,
                       const CellRunOptions& o) {
  namespace dx = evals::diagnostics;
  opts.max_tokens = eval.attention_tokens;
  const dx::HeldOutTokens text = dx::read_held_out(source, scored, opts.max_tokens);
  opts.stop = [] { return stop_requested(); };
  auto last = std::chrono::steady_clock::now();
  if (!o.quiet) {
    say(id, label, fmt::format("measuring attention: {}, windows of {} tokens", text.description,
                               opts.window));
    opts.progress = [&](int64_t done, int64_t total) {
      const auto now = std::chrono::steady_clock::now();
      if (done < total && now - last < std::chrono::seconds(10)) return;
      last = now;
      say(id, label, fmt::format("measuring attention: {}/{} windows", done, total));
    };
  }
  try {
    const dx::ModelDiagnostics d = dx::measure(*scored.model, text.tokens, opts);
    store.record_attn_stats(id, dx::to_attn_stats(d), dx::measurement(text, d.window, d.windows));
    return true;
  } catch (const dx::Stopped&) {
    return false;
  }
}

// A trained cell: its own validation text, in windows of eval.attention_window (0: its context),
// Mask@k runs as trained.
bool measure_attention(const Cell& cell, results::Store& store, const evals::ScoredModel& scored,
                       const CellRunOptions& o) {
  const config::RunConfig& cfg = *scored.cfg;
  if (cfg.data.val.empty()) return true;  // no held-out text to measure on
  evals::diagnostics::DiagnosticsOptions opts;
  opts.window = cfg.eval.attention_window > 0 ? cfg.eval.attention_window : cfg.model.context_length;
  opts.fixed_position = cfg.data.fixed_token_position;
  opts.fixed_token_id = cfg.data.fixed_token_id;
  return measure_attention(cell.id, cell.label, store, scored, {}, opts, cfg.eval, o);
}

// An imported model ([[pretrained]]) measured as the cells are: the base config's validation
// shard read as text in the model's tokens (diagnostics/text_source.h), in the cells' windows
// (eval.attention_window, else their context; the model's context when shorter).
bool measure_pretrained_attention(const std::string& id, const std::string& label,
                                  results::Store& store, const evals::ScoredModel& scored,
                                  const config::RunConfig& base, const CellRunOptions& o) {
  if (base.data.val.empty()) return true;
  evals::diagnostics::DiagnosticsOptions opts;
  const int64_t cells = base.eval.attention_window > 0 ? base.eval.attention_window
                                                       : base.model.context_length;
  opts.window = std::min(cells, scored.model->shape().context_length);
  evals::diagnostics::TextSource source;
  source.shard = base.data.val;
  return measure_attention(id, label, store, scored, source, opts, base.eval, o);
}

// The cell's trained model, on its train.device, with the tokenizer from the data root.
evals::ScoredModel load_cell_model(const std::filesystem::path& run_dir, const CellRunOptions& o) {
  return evals::load_scored_model(run_dir, "", "train.device", o.data_root.string());
}

}  // namespace

const char* to_string(CellOutcome o) {
  switch (o) {
    case CellOutcome::Finished: return "finished";
    case CellOutcome::Evaluated: return "evaluated";
    case CellOutcome::Skipped: return "skipped";
    case CellOutcome::Held: return "held by another process";
    case CellOutcome::Diverged: return "diverged";
    case CellOutcome::Interrupted: return "interrupted";
    case CellOutcome::Failed: return "failed";
    case CellOutcome::JobFailed: return "training job failed (resumable)";
    case CellOutcome::Busy: return "run folder or database busy (resumable)";
  }
  return "?";
}

std::vector<std::string> missing_tasks(const std::string& run_id, const config::EvalConfig& eval,
                                       int64_t trained_length, results::Store& store) {
  std::vector<results::EvalRow> have = store.evals(run_id);
  std::vector<std::string> missing;
  for (const std::string& name : evals::scored_task_names(eval, trained_length)) {
    const int64_t limit = eval.limit_for(evals::parse_task_at_length(name).task);
    const results::EvalRow* other = nullptr;  // stored with another item limit
    bool found = false;
    for (const auto& r : have) {
      if (r.task != name) continue;
      found = found || r.limit == limit;
      if (r.limit != limit) other = &r;
    }
    // A task stored with another limit is a different measurement, not a missing one: scoring it
    // again would replace it (the evaluation's identity, results/store_records.cpp).
    if (!found && other) {
      throw UsageError(fmt::format(
          "run {} already holds {} scored with {} (n = {}), and this sweep scores it with {}: "
          "a second scoring would replace a different measurement; use another --db, or the "
          "stored limit (eval.limit / eval.task_limits)",
          run_id, name, results::item_limit_text(other->limit), other->n,
          results::item_limit_text(limit)));
    }
    if (!found) missing.push_back(name);
  }
  return missing;
}

std::vector<std::string> missing_tasks(const Cell& cell, results::Store& store) {
  return missing_tasks(cell.id, cell.config.eval, cell.config.model.context_length, store);
}

bool transient_failure(const std::exception& e, const std::filesystem::path& run_dir) {
  // SQLite's message for SQLITE_BUSY and SQLITE_LOCKED, which results/sqlite.cpp passes on.
  const std::string what = e.what();
  if (what.find("database is locked") != std::string::npos ||
      what.find("database table is locked") != std::string::npos) {
    return true;
  }
  // The trainer's lock is released once its exception has left train_run, so a lock that cannot
  // be taken now is another process's.
  std::error_code ec;
  if (!std::filesystem::exists(run_dir / ".lock", ec)) return false;
  try {
    train::RunLock probe(run_dir);
    return false;
  } catch (const UsageError&) {
    return true;  // held by a live process
  } catch (const std::exception&) {
    return false;  // the lock file cannot even be opened: not a passing condition
  }
}

results::PendingRun pending_run(const Cell& cell) {
  results::PendingRun run;
  run.id = cell.id;
  run.cell = cell.label;
  run.config_json = config::canonical_json(cell.config);
  run.params = params_of(cell.config);
  return run;
}

namespace {

// A cell the claim did not give to this process: what its status says to do instead.
CellOutcome unclaimed(const Cell& cell, const results::ClaimResult& claim, results::Store& store,
                      const std::filesystem::path& run_dir, const CellRunOptions& o) {
  switch (claim.previous) {
    case RunStatus::Finished:
      // Tasks added to the sweep after the run finished are scored from its checkpoint; the
      // model is never trained again. No claim is needed: eval rows are upserts.
      {
        const std::vector<std::string> tasks = missing_tasks(cell, store);
        if (tasks.empty()) return CellOutcome::Skipped;
        return evaluate_missing(cell, store, load_cell_model(run_dir, o), tasks, o)
                   ? CellOutcome::Evaluated
                   : CellOutcome::Interrupted;
      }
    case RunStatus::Running:
      say(cell, "running in " + claim.holder + ", skipped");
      return CellOutcome::Held;
    case RunStatus::Failed:
      say(cell, "failed before, skipped (--retry-failed runs it again)");
      return CellOutcome::Skipped;
    default:
      return CellOutcome::Skipped;  // diverged: a result, recorded as such
  }
}

// Trains the cell in this process, with every metric written through to the store as it is
// logged; or, with more than one rank per cell, as a job whose metrics the store gets at its end.
TrainedCell train_cell(const Cell& cell, results::Store& store, const std::filesystem::path& run_dir,
                       const CellRunOptions& o) {
  if (o.launch.distributed()) {
    return train_distributed(cell.config, run_dir, store, cell.id, o.launch);
  }
  StoreSink sink(store, cell.id);
  train::TrainOptions to;
  to.quiet = o.quiet;
  to.should_stop = [] { return stop_requested(); };
  to.attention_probe = evals::diagnostics::training_probe;
  return {train::train_run(cell.config, run_dir, &sink, to), ""};
}

// The peak resident memory of this process while it trained, evaluated and measured the cell, as
// the run's metric system/peak_rss_mib (at its last step). Not for a multi-rank cell, whose
// training ran in other processes.
void record_peak_memory(const Cell& cell, results::Store& store, int64_t step,
                        const CellRunOptions& o) {
  const int64_t peak = peak_rss_bytes();
  if (peak < 0 || o.launch.distributed()) return;
  store.log_metrics(cell.id, {{"system/peak_rss_mib", step, static_cast<double>(peak) / (1 << 20)}});
}

// After training: the status it ended in, else evaluation, attention statistics, finished.
CellOutcome after_training(const Cell& cell, const TrainedCell& t, results::Store& store,
                           const std::filesystem::path& run_dir, const CellRunOptions& o) {
  const train::TrainResult& r = t.result;
  if (!t.failure.empty()) {
    // Not failed: the ranks' checkpoint is intact, and only the next run can tell a rank that died
    // once from a cell that cannot train; it resumes the cell.
    store.set_status(cell.id, RunStatus::Interrupted, t.failure);
    say(cell, t.failure);
    return CellOutcome::JobFailed;
  }
  if (r.status == "interrupted") {
    store.set_status(cell.id, RunStatus::Interrupted);
    say(cell, fmt::format("interrupted at step {}; the checkpoint is kept", r.step));
    return CellOutcome::Interrupted;
  }
  if (r.status == "diverged") {
    store.set_status(cell.id, RunStatus::Diverged,
                     fmt::format("non-finite training loss after {} steps", r.step));
    say(cell, fmt::format("diverged: non-finite loss after {} steps", r.step));
    return CellOutcome::Diverged;
  }
  // Loaded once, on the cell's train.device, for evaluation and attention statistics.
  const evals::ScoredModel scored = load_cell_model(run_dir, o);
  if (!evaluate_missing(cell, store, scored, missing_tasks(cell, store), o)) {
    store.set_status(cell.id, RunStatus::Interrupted);
    say(cell, "interrupted during evaluation; scored tasks are kept");
    return CellOutcome::Interrupted;
  }
  if (!measure_attention(cell, store, scored, o)) {
    store.set_status(cell.id, RunStatus::Interrupted);
    say(cell, "interrupted while measuring attention; scored tasks are kept");
    return CellOutcome::Interrupted;
  }
  record_peak_memory(cell, store, r.step, o);
  store.set_status(cell.id, RunStatus::Finished);
  say(cell, fmt::format("finished (step {}, loss {:.4f})", r.step, r.train_loss));
  return CellOutcome::Finished;
}

// The device the cell trains on (its train.device, checked by the runner's preflight), with the
// GPU's name and the ranks of a multi-rank cell: the sweep's metadata only knows whether the
// machine has a GPU.
std::string cell_device(const Cell& cell, const CellLaunch& launch) {
  std::string device = model::device_description(model::resolve_device(cell.config.train.device));
  if (!launch.distributed()) return device;
  return fmt::format("{} x {} ranks ({} node(s) x {})", device,
                     launch.gpus_per_cell * launch.nodes_per_cell, launch.nodes_per_cell,
                     launch.gpus_per_cell);
}

// run_cell's work, between the peak reset and the memory release.
CellOutcome run_cell_here(const SweepFile& sweep, const Cell& cell, results::Store& store,
                          const CellRunOptions& o) {
  const std::filesystem::path run_dir = o.runs_dir / cell.id;
  results::ClaimOptions co;
  co.retry_failed = o.retry_failed;
  results::RunMetadata metadata = o.metadata;
  metadata.device = cell_device(cell, o.launch);
  results::ClaimResult claim = store.claim_run(sweep.name, pending_run(cell), metadata, co);
  if (!claim.claimed) return unclaimed(cell, claim, store, run_dir, o);
  // A pending run was listed by the runner (Store::add_pending_runs) but never started.
  const bool resuming = claim.existed && claim.previous != RunStatus::Pending;
  say(cell, resuming ? fmt::format("resuming ({} before)", results::to_string(claim.previous))
                     : std::string("starting"));
  const PeriodicWorker heartbeat = claim_heartbeat(store, cell.id);
  try {
    return after_training(cell, train_cell(cell, store, run_dir, o), store, run_dir, o);
  } catch (const std::exception& e) {
    if (transient_failure(e, run_dir)) {
      store.set_status(cell.id, RunStatus::Interrupted, e.what());
      say(cell, std::string("left interrupted (the same command resumes it): ") + e.what());
      return CellOutcome::Busy;
    }
    store.set_status(cell.id, RunStatus::Failed, e.what());
    if (dynamic_cast<const UsageError*>(&e)) throw;  // bad config or data: exit 2
    say(cell, std::string("failed: ") + e.what());
    return CellOutcome::Failed;
  }
}

}  // namespace

namespace {

CellOutcome run_pretrained_here(const SweepFile& sweep, const PretrainedEntry& entry,
                                const config::RunConfig& base, results::Store& store,
                                const CellRunOptions& o) {
  const config::EvalConfig& eval = base.eval;
  const evals::ScoredModel scored =
      evals::load_scored_model(entry.path, base.train.device, "train.device", o.data_root.string());
  const std::string& id = scored.run_id;
  const std::string label = "pretrained=" + scored.pretrained->name;
  results::ClaimOptions co;
  co.retry_failed = o.retry_failed;
  results::RunMetadata metadata = o.metadata;
  metadata.device = model::device_description(scored.device);
  evals::check_stored_tokenizer(store, scored);
  results::PendingRun run;
  run.id = id;
  run.cell = label;
  run.config_json = scored.config_json();
  run.params = scored.params();
  const results::ClaimResult claim = store.claim_run(sweep.name, run, metadata, co);
  const std::vector<std::string> tasks =
      missing_tasks(id, eval, scored.model->shape().context_length, store);
  if (!claim.claimed) {
    switch (claim.previous) {
      case RunStatus::Finished: {  // scored before (another sweep, `eval --db`): the rest only
        const bool measured = store.has_attn_stats(id);  // `eval --db` measures no attention
        if (tasks.empty() && measured) return CellOutcome::Skipped;
        if (!evaluate_missing(id, label, eval, store, scored, tasks, o)) return CellOutcome::Interrupted;
        if (!measured && !measure_pretrained_attention(id, label, store, scored, base, o)) {
          return CellOutcome::Interrupted;
        }
        return CellOutcome::Evaluated;
      }
      case RunStatus::Running:
        say(id, label, "running in " + claim.holder + ", skipped");
        return CellOutcome::Held;
      default:
        say(id, label, "failed before, skipped (--retry-failed runs it again)");
        return CellOutcome::Skipped;
    }
  }
  const PeriodicWorker heartbeat = claim_heartbeat(store, id);
  try {
    if (!evaluate_missing(id, label, eval, store, scored, tasks, o)) {
      store.set_status(id, RunStatus::Interrupted);
      say(id, label, "interrupted during evaluation; scored tasks are kept");
      return CellOutcome::Interrupted;
    }
    if (!measure_pretrained_attention(id, label, store, scored, base, o)) {
      store.set_status(id, RunStatus::Interrupted);
      say(id, label, "interrupted while measuring attention; scored tasks are kept");
      return CellOutcome::Interrupted;
    }
    store.set_status(id, RunStatus::Finished);
    say(id, label, "finished");
    return CellOutcome::Finished;
  } catch (const std::exception& e) {
    store.set_status(id, RunStatus::Failed, e.what());
    if (dynamic_cast<const UsageError*>(&e)) throw;
    say(id, label, std::string("failed: ") + e.what());
    return CellOutcome::Failed;
  }
}

}  // namespace

void preflight_pretrained(const PretrainedEntry& entry, const config::EvalConfig& eval) {
  // The weights too, checked against config.json without being read: a bad folder fails before the
  // cells train, not after.
  const model::pretrained::ArchitectureConfig arch =
      model::pretrained::check_pretrained(entry.path);
  data::HFTokenizer::load(entry.path);
  for (int64_t n : eval.contexts) {
    try {
      model::scoring_length(model::pretrained::shape_of(arch), n, "[eval] contexts");
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("[[pretrained]] path = \"{}\": {}", entry.path.string(), e.what()));
    }
  }
}

CellOutcome run_pretrained(const SweepFile& sweep, const PretrainedEntry& entry,
                           const config::RunConfig& base, results::Store& store,
                           const CellRunOptions& o) {
  const CellOutcome outcome = run_pretrained_here(sweep, entry, base, store, o);
  release_free_memory();
  return outcome;
}

CellOutcome run_cell(const SweepFile& sweep, const Cell& cell, results::Store& store,
                     const CellRunOptions& o) {
  // Each cell measures its own peak memory, and hands what it freed back to the system before the
  // next one starts: a sweep's peak is its largest cell's (docs/sweeps.md, "Memory").
  reset_peak_rss();
  const CellOutcome outcome = run_cell_here(sweep, cell, store, o);
  release_free_memory();
  return outcome;
}

}  // namespace attnbench::sweep
