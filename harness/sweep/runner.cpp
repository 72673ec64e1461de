#include "harness/sweep/runner.h"

#include <toml++/toml.h>

#include "core/config/toml_bridge.h"
#include "harness/sweep/values.h"

#include <torch/torch.h>

#include <map>
#include <set>

#include <fmt/format.h>

#include "core/common/output_path.h"
#include "core/common/paths.h"
#include "core/common/stop_signal.h"
#include "core/data/text_tokenizer.h"
#include "evals/evaluator.h"
#include "evals/scored_model.h"
#include "evals/tasks/task.h"
#include "harness/sweep/cell_launch.h"
#include "harness/sweep/cell_run.h"
#include "harness/sweep/expand.h"
#include "harness/sweep/parallel.h"
#include "harness/sweep/prune.h"
#include "harness/sweep/slurm.h"
#include "harness/sweep/verdict.h"
#include "train/preflight.h"
#include "results/runs.h"

namespace attnbench::sweep {
namespace {

namespace fs = std::filesystem;
using results::RunStatus;

// What a run of the sweep would do with a cell, given its run in the store (nullopt: none yet).
std::string planned_action(const Cell& cell, const std::optional<results::RunInfo>& run,
                           results::Store* store, bool retry_failed) {
  if (!run) return "run";
  switch (run->status) {
    case RunStatus::Pending: return "run";
    case RunStatus::Interrupted: return "resume";
    case RunStatus::Running: return "skip (running in " + run->owner + " unless stale)";
    case RunStatus::Failed: return retry_failed ? "retry" : "skip (failed; --retry-failed)";
    case RunStatus::Diverged: return "skip (diverged)";
    case RunStatus::Finished: {
      size_t missing = store ? missing_tasks(cell, *store).size() : 0;
      return missing ? fmt::format("evaluate {} missing task(s)", missing) : "skip (finished)";
    }
  }
  return "?";
}

// One cell's run in the store (nullopt: none yet) and what a run of the sweep would do with it.
struct PlannedCell {
  const Cell* cell;
  std::optional<results::RunInfo> run;
  std::string action;
};

// The plan of every cell, read from the database as it is, which is not created here (an empty one,
// which a concurrent runner may be creating, holds no runs): the dry run prints it, the runner
// keeps the cells with work.
std::vector<PlannedCell> plan(const std::vector<const Cell*>& cells, const fs::path& db,
                              bool retry_failed) {
  std::optional<results::Store> store = results::Store::open_if_results(db);
  std::vector<PlannedCell> out;
  for (const Cell* c : cells) {
    auto run = store ? store->run(c->id) : std::nullopt;
    std::string action = planned_action(*c, run, store ? &*store : nullptr, retry_failed);
    out.push_back({c, std::move(run), std::move(action)});
  }
  return out;
}

// The cells this call has work for: to train, resume, retry or evaluate. A cell marked running is
// included: only the claim can tell a live holder from one that was killed (kill -9, a second
// Ctrl-C) and left the mark behind; the cell's runner takes such a cell over and skips one whose
// holder is alive.
std::vector<const Cell*> cells_with_work(const std::vector<const Cell*>& cells, const fs::path& db,
                                         bool retry_failed) {
  std::vector<const Cell*> todo;
  for (const PlannedCell& p : plan(cells, db, retry_failed)) {
    const bool running = p.run && p.run->status == RunStatus::Running;
    if (p.action.rfind("skip", 0) != 0 || running) todo.push_back(p.cell);
  }
  return todo;
}

void print_header(const SweepFile& sweep, const Expansion& e, const fs::path& db,
                  const SweepOptions& o) {
  size_t included = 0;
  for (auto& c : e.cells) included += c.included;
  size_t seeds = std::max<size_t>(1, sweep.seeds.size());
  fmt::print("sweep {} ({}): {} cells = ({} grid combinations - {} excluded + {} included) x {} "
             "seed(s)\n",
             sweep.name, sweep.file.string(), e.cells.size(), e.combinations, e.excluded,
             included / seeds, seeds);
  const auto& tasks = e.cells.front().config.eval.tasks;
  fmt::print("base {}; tasks: {}{}\n", sweep.base.string(), tasks.empty() ? "(none)" : join(tasks),
             sweep.limit ? fmt::format(" (limit {})", *sweep.limit) : "");
  fmt::print("database {}; run folders {}/<run id>/\n", db.string(), o.runs_dir.string());
  if (o.gpus_per_cell * o.nodes_per_cell > 1) {
    fmt::print("each cell trains on {} node(s) x {} rank(s), as {}\n", o.nodes_per_cell,
               o.gpus_per_cell, in_slurm_allocation() ? "an srun job step" : "local ranks");
  }
}

int dry_run(const SweepFile& sweep, const Expansion& e, const std::vector<const Cell*>& cells,
            const fs::path& db, const SweepOptions& o) {
  print_header(sweep, e, db, o);
  fmt::print("\n{:<12}  {:<11}  {:<32}  {}\n", "RUN ID", "STATUS", "ACTION", "CELL");
  std::map<std::string, int> actions;
  for (const PlannedCell& p : plan(cells, db, o.retry_failed)) {
    ++actions[p.action.substr(0, p.action.find(' '))];
    fmt::print("{:<12}  {:<11}  {:<32}  {}\n", p.cell->id,
               p.run ? results::to_string(p.run->status) : "-", p.action, p.cell->label);
  }
  // Eval-only cells: their run ids come from their weights, which a dry run does not read.
  for (const PretrainedEntry& p : sweep.pretrained) {
    ++actions["evaluate"];
    fmt::print("{:<12}  {:<11}  {:<32}  pretrained {}\n", "-", "-", "evaluate missing tasks",
               p.path.string());
  }
  std::vector<std::string> parts;
  for (auto& [a, n] : actions) parts.push_back(fmt::format("{} {}", a, n));
  fmt::print("\nwould: {}\n", join(parts, ", "));
  return 0;
}

// The [[pretrained]] entries, after the trained cells, in this process; the labels of those that
// did not end finished, evaluated or skipped.
std::vector<std::string> run_pretrained_entries(const SweepFile& sweep, const Expansion& e,
                                                results::Store& store, const CellRunOptions& co) {
  std::vector<std::string> unfinished;
  // The sweep's tasks, limits, device and held-out text.
  const config::RunConfig& base = e.cells.front().config;
  for (const PretrainedEntry& p : sweep.pretrained) {
    if (stop_requested()) break;
    const CellOutcome outcome = run_pretrained(sweep, p, base, store, co);
    if (outcome == CellOutcome::Interrupted || outcome == CellOutcome::Failed ||
        outcome == CellOutcome::Held) {
      unfinished.push_back(p.path.string() + " (" + to_string(outcome) + ")");
    }
  }
  return unfinished;
}

// Every answer of every cell's tasks fits the cell's context (evals::require_answers_fit): a
// PIQA answer longer than a small model's context was found only after training. Cells sharing
// their context, limits and BOS policy are checked once; the error names the cell.
void require_answers_fit(const std::vector<const Cell*>& cells,
                         const std::shared_ptr<const data::TextTokenizer>& tokenizer,
                         const fs::path& data_root) {
  const evals::TextEncoder encode = evals::text_encoder(*tokenizer);
  std::set<std::string> checked;
  for (const Cell* c : cells) {
    const config::EvalConfig& eval = c->config.eval;
    const std::string key = fmt::format("{} {} {} {}", c->config.model.context_length, eval.limit,
                                        eval.bos, join(eval.tasks, ","));
    std::string limits;
    for (const auto& [task, limit] : eval.task_limits) limits += fmt::format(" {}={}", task, limit);
    if (eval.tasks.empty() || !checked.insert(key + limits).second) continue;
    const evals::EvalOptions options = evals::eval_options(eval);
    try {
      for (const evals::LoadedTask& task :
           evals::load_tasks(eval.tasks, data_root, eval.limit, eval.task_limits)) {
        evals::require_answers_fit(task, encode, options, c->config.model.context_length);
      }
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("cell {} ({}): {}", c->label, c->id, e.what()));
    }
  }
}

// Checks, before any training, what every cell will need: config consistency, the shards (once
// per distinct data spec), the tasks' files and the tokenizer.
void preflight_all(const SweepFile& sweep, const Expansion& e, const std::vector<const Cell*>& cells,
                   const fs::path& data_root) {
  // The [[pretrained]] entries, scored after the trained cells with the sweep's [eval].
  for (const PretrainedEntry& p : sweep.pretrained) preflight_pretrained(p, e.cells.front().config.eval);
  std::set<std::string> data_seen, tasks;
  for (const Cell* c : cells) {
    train::check_training_config(c->config);
    std::string key = c->config.data.train + "\n" + c->config.data.val + "\n" +
                      std::to_string(c->config.model.vocab_size);
    if (data_seen.insert(key).second) train::preflight(c->config);
    tasks.insert(c->config.eval.tasks.begin(), c->config.eval.tasks.end());
  }
  if (tasks.empty()) return;
  // Loads every listed task's files (the documents the cells' limits take), naming the cell, with
  // each cell's tokenizer as its evaluation will find it (a run continuing a pretrained model reads
  // text with that model's; model.init_from, "" for GPT-2's).
  std::map<std::string, std::vector<const Cell*>> by_tokenizer;
  for (const Cell* c : cells) by_tokenizer[c->config.model.init_from].push_back(c);
  for (const auto& [init_from, group] : by_tokenizer) {
    require_answers_fit(group, evals::run_tokenizer(group.front()->config, data_root.string()),
                        data_root);
  }
}

}  // namespace

// --set applies to every cell, under the grid: a key that the grid, a [[zip]] or [[include]] sets
// (or train.seed, which [sweep] seeds set) would be overridden in every cell it matters to, so the
// override is refused rather than silently ignored.
static void apply_command_line(SweepFile& sweep, const SweepOptions& o) {
  for (const std::string& text : o.sets) {
    const config::Assignment a = config::parse_assignment(text);
    const SourceLocation where{"--set " + text};
    for (const Axis& ax : sweep.axes) {
      for (size_t k = 0; k < ax.keys.size(); ++k) {
        if (ax.keys[k] != a.key) continue;
        throw InputError(where, "'" + a.key + "' is varied by the sweep's [grid] or [[zip]] entry at " +
                                    ax.key_where[k].str() + ", which sets it in every cell; change "
                                    "its values there instead");
      }
    }
    if (a.key == "train.seed" && !sweep.seeds.empty()) {
      throw InputError(where, "'train.seed' is set by the sweep's seeds at " +
                                  sweep.seeds_where.str() + "; change them there instead");
    }
    config::Value value = config::scalar_value(a.value(), "--set " + text, o.file);
    check_sweep_value(value, where, "the value");
    sweep.data.push_back({a.key, std::move(value), where, where});
  }
  if (o.limit) sweep.limit = *o.limit;
}

// The launch of each cell's training (one process, or a job of several ranks).
static CellLaunch cell_launch(const SweepOptions& o) {
  CellLaunch l;
  l.gpus_per_cell = o.gpus_per_cell;
  l.oversubscribe = o.oversubscribe;
  l.nodes_per_cell = o.nodes_per_cell;
  l.dist_timeout_s = o.dist_timeout;
  l.executable = o.executable;
  return l;
}

// Option values that would mean nothing (docs/sweeps.md, "Errors, before any work"); the Slurm
// script and a dry run only need these and sane rank counts, a real run checks the rest later.
static void check_options(const SweepOptions& o) {
  if (o.jobs < 1) throw UsageError("--jobs must be at least 1");
  if (o.limit && *o.limit < 1) throw UsageError("--limit must be at least 1 (omit it for all items)");
  if (o.runs_dir.empty()) throw UsageError("--runs-dir must not be empty");
  if (o.prune && (o.dry_run || !o.only.empty() || !o.slurm.empty())) {
    throw UsageError("--prune takes runs out of the sweep and runs nothing: it does not combine with "
                     "--dry-run, --only or --slurm");
  }
  check_rank_counts(cell_launch(o));
}

// --slurm: the array script instead of running (docs/sweeps.md, "Slurm"), and how to go on.
static int slurm_array(const SweepFile& sweep, const std::vector<const Cell*>& cells,
                       const SweepOptions& o, const fs::path& db) {
  std::vector<NamedPath> inputs = {
      {"the sweep file", sweep.file}, {"its base config", sweep.base}, {"--db", db}};
  for (const PretrainedEntry& p : sweep.pretrained) inputs.push_back({"[[pretrained]]", p.path});
  refuse_output_over_inputs({"--slurm", o.slurm}, inputs);
  write_slurm_script(sweep, cells, o, db);
  fmt::print("wrote {}: a Slurm array of {} cell(s), one database per cell\n", o.slurm,
             cells.size());
  fmt::print("submit:   sbatch {}\nafterwards, merge the databases:\n  {}\n", o.slurm,
             merge_command(o.executable, db));
  if (!sweep.pretrained.empty()) {
    fmt::print("then score the {} [[pretrained]] model(s), which the array leaves out:\n  "
               "attnbench sweep {} --db {}\n",
               sweep.pretrained.size(), sweep.file.string(), db.string());
  }
  return 0;
}

static CellRunOptions cell_run_options(const SweepOptions& o, const fs::path& data_root) {
  CellRunOptions co;
  co.runs_dir = o.runs_dir;
  co.data_root = data_root;
  co.retry_failed = o.retry_failed;
  co.quiet = o.quiet;
  co.metadata = o.metadata;
  co.launch = cell_launch(o);
  return co;
}

int run_sweep(const SweepOptions& o) {
  check_options(o);
  SweepFile sweep = parse_sweep_file(o.file);
  apply_command_line(sweep, o);
  Expansion e = expand(sweep);
  std::vector<const Cell*> cells;
  if (o.only.empty()) {
    for (const Cell& c : e.cells) cells.push_back(&c);
  } else {
    cells.push_back(&find_cell(e, o.only));
  }
  const fs::path db = results::default_db_path(o.db);

  if (o.prune) return prune_sweep(sweep, e, db);
  if (o.only.empty() && o.slurm.empty()) note_stale_runs(sweep, stale_runs(sweep, e, db));
  if (!o.slurm.empty()) return slurm_array(sweep, cells, o, db);
  if (o.dry_run) return dry_run(sweep, e, cells, db, o);

  check_cell_launch(cell_launch(o), o.jobs, cells);
  const fs::path data_root = attnbench::data_root(o.data_dir);
  // What is left to do is read before anything is written, and checked: a sweep its preflight
  // refuses leaves no database and no pending rows behind. `--only` (a child of --jobs, a Slurm
  // task) was checked by whoever started it.
  const std::vector<const Cell*> todo = cells_with_work(cells, db, o.retry_failed);
  if (o.only.empty()) {
    print_header(sweep, e, db, o);
    if (!todo.empty() || !sweep.pretrained.empty()) preflight_all(sweep, e, todo, data_root);
  }
  const StopSignals signals;  // the first Ctrl-C: cells checkpoint and stop, resumable
  results::Store store = results::Store::open(db);
  store.upsert_sweep(sweep.name, absolute_path(sweep.file));
  std::vector<results::PendingRun> pending;
  for (const Cell* c : cells) pending.push_back(pending_run(*c));
  store.add_pending_runs(sweep.name, pending);

  const CellRunOptions co = cell_run_options(o, data_root);
  if (o.jobs > 1 && cells.size() > 1) {
    run_children(o, db, todo);  // each cell's end is in the store, which the verdict reads
  } else {
    for (const Cell* c : cells) {
      if (stop_requested()) break;
      run_cell(sweep, *c, store, co);
    }
  }

  if (o.only.empty()) finish_shared_cells(sweep, cells, store, co);
  // --only names one trained cell (a child of --jobs, a Slurm task): the runner does the rest.
  const std::vector<std::string> pretrained_unfinished =
      o.only.empty() ? run_pretrained_entries(sweep, e, store, co) : std::vector<std::string>{};
  return sweep_verdict(sweep, cells, store, o, pretrained_unfinished);
}

}  // namespace attnbench::sweep
