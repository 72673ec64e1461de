#include "harness/sweep/runner.h"

#include <toml++/toml.h>

#include "core/config/toml_bridge.h"
#include "harness/sweep/values.h"

#include <torch/torch.h>

#include <iostream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/common/paths.h"
#include "evals/tasks/task.h"
#include "harness/sweep/cell_launch.h"
#include "harness/sweep/cell_run.h"
#include "harness/sweep/expand.h"
#include "harness/sweep/interrupt.h"
#include "harness/sweep/parallel.h"
#include "harness/sweep/slurm.h"
#include "harness/train/preflight.h"
#include "results/query.h"
#include "results/table.h"

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
  std::optional<results::Store> store;
  if (fs::exists(db)) store = results::Store::open(db, /*read_only=*/true);
  fmt::print("\n{:<12}  {:<11}  {:<32}  {}\n", "RUN ID", "STATUS", "ACTION", "CELL");
  std::map<std::string, int> actions;
  for (const Cell* c : cells) {
    std::optional<results::RunInfo> run;
    if (store) run = store->run(c->id);
    std::string action = planned_action(*c, run, store ? &*store : nullptr, o.retry_failed);
    ++actions[action.substr(0, action.find(' '))];
    fmt::print("{:<12}  {:<11}  {:<32}  {}\n", c->id, run ? results::to_string(run->status) : "-",
               action, c->label);
  }
  std::vector<std::string> parts;
  for (auto& [a, n] : actions) parts.push_back(fmt::format("{} {}", a, n));
  fmt::print("\nwould: {}\n", join(parts, ", "));
  return 0;
}

// Checks, before any training, what every cell will need: config consistency, the shards (once
// per distinct data spec), the tasks' files and the tokenizer.
void preflight_all(const std::vector<const Cell*>& cells, const fs::path& data_root) {
  std::set<std::string> data_seen, tasks;
  for (const Cell* c : cells) {
    train::check_training_config(c->config);
    std::string key = c->config.data.train + "\n" + c->config.data.val + "\n" +
                      std::to_string(c->config.model.vocab_size);
    if (data_seen.insert(key).second) train::preflight(c->config);
    tasks.insert(c->config.eval.tasks.begin(), c->config.eval.tasks.end());
  }
  if (tasks.empty()) return;
  for (const auto& file : {"encoder.json", "vocab.bpe"}) {
    if (!fs::exists(data_root / "gpt2_tokenizer" / file)) {
      throw UsageError("the GPT-2 tokenizer is missing: expected " +
                       (data_root / "gpt2_tokenizer" / file).string() +
                       " (set --data-dir or ATTNBENCH_DATA to the data folder)");
    }
  }
  for (const auto& t : tasks) evals::find_task(t).load(data_root);
}

// The sweep's table once it is done: the store's paper-style renderer, else the list of runs.
void print_results(results::Store& store, const std::string& sweep) {
  try {
    results::TableRequest request;
    request.sweep = sweep;
    results::ResultTable table = results::build_table(store.db(), request);
    if (!table.columns.empty()) {
      std::cout << "\n" << results::render_table(table, "md");
      return;
    }
  } catch (const std::exception&) {
    // No evals yet (e.g. a sweep without tasks): the run list below says what there is.
  }
  results::RunFilter filter;
  filter.sweep = sweep;
  std::cout << "\n" << results::render_grid(results::runs_grid(store, filter), "table");
}

// Status counts of the sweep's cells in the store, e.g. "finished 10, running 2, not started 3".
std::string status_summary(results::Store& store, const std::vector<const Cell*>& cells) {
  std::map<std::string, int> counts;
  for (const Cell* c : cells) {
    auto run = store.run(c->id);
    ++counts[run ? results::to_string(run->status) : "not started"];
  }
  std::vector<std::string> parts;
  for (auto& [s, n] : counts) parts.push_back(fmt::format("{} {}", s, n));
  return join(parts, ", ");
}

}  // namespace

static void apply_command_line(SweepFile& sweep, const SweepOptions& o) {
  for (const std::string& text : o.sets) {
    const config::Assignment a = config::parse_assignment(text);
    const SourceLocation where{"--set " + text};
    sweep.data.push_back({a.key, config::scalar_value(a.value(), "--set " + text, o.file), where,
                          where});
  }
  if (o.limit) sweep.limit = *o.limit;
}

// The launch of each cell's training (one process, or a job of several ranks).
static CellLaunch cell_launch(const SweepOptions& o) {
  CellLaunch l;
  l.gpus_per_cell = o.gpus_per_cell;
  l.nodes_per_cell = o.nodes_per_cell;
  l.dist_timeout_s = o.dist_timeout;
  l.executable = o.executable;
  return l;
}

int run_sweep(const SweepOptions& o) {
  if (o.jobs < 1) throw UsageError("--jobs must be at least 1");
  // The Slurm script and a dry run only need sane numbers; a real run checks the rest below.
  check_rank_counts(cell_launch(o));
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

  if (!o.slurm.empty()) {
    write_slurm_script(sweep, cells, o, db);
    fmt::print("wrote {}: a Slurm array of {} cell(s), one database per cell\n", o.slurm,
               cells.size());
    fmt::print("submit:   sbatch {}\nafterwards, merge the databases:\n  {}\n", o.slurm,
               merge_command(o.executable, db));
    return 0;
  }
  if (o.dry_run) return dry_run(sweep, e, cells, db, o);

  check_cell_launch(cell_launch(o), o.jobs, cells);
  const fs::path data_root = attnbench::data_root(o.data_dir);
  install_interrupt_handler();
  results::Store store = results::Store::open(db);
  store.upsert_sweep(sweep.name, absolute_path(sweep.file));
  std::vector<results::PendingRun> pending;
  for (const Cell* c : cells) pending.push_back(pending_run(*c));
  store.add_pending_runs(sweep.name, pending);

  bool failed = false;
  if (o.jobs > 1 && cells.size() > 1) {
    // The children check and claim their own cells; the runner only sorts out what is left to do.
    // A cell marked running goes to a child too: only the claim can tell a live holder from one
    // that was killed (kill -9, a second Ctrl-C) and left the mark behind; the child takes such a
    // cell over and skips one whose holder is alive.
    std::vector<const Cell*> todo;
    for (const Cell* c : cells) {
      const auto run = store.run(c->id);
      std::string action = planned_action(*c, run, &store, o.retry_failed);
      if (action.rfind("skip", 0) != 0 || (run && run->status == RunStatus::Running)) {
        todo.push_back(c);
      }
    }
    if (!todo.empty()) preflight_all(todo, data_root);
    print_header(sweep, e, db, o);
    for (auto& [id, code] : run_children(o, db, todo)) failed = failed || (code != 0 && code != 130);
  } else {
    if (o.only.empty()) {
      print_header(sweep, e, db, o);
      preflight_all(cells, data_root);
    }
    CellRunOptions co;
    co.runs_dir = o.runs_dir;
    co.data_root = data_root;
    co.retry_failed = o.retry_failed;
    co.quiet = o.quiet;
    co.metadata = o.metadata;
    co.launch = cell_launch(o);
    for (const Cell* c : cells) {
      if (interrupted()) break;
      CellOutcome outcome = run_cell(sweep, *c, store, co);
      failed = failed || outcome == CellOutcome::Failed || outcome == CellOutcome::JobFailed;
    }
  }

  if (!o.only.empty()) {  // one cell, often a child of --jobs or a Slurm task: no summary
    return interrupted() ? 130 : failed ? 1 : 0;
  }
  fmt::print("\nsweep {}: {}\n", sweep.name, status_summary(store, cells));
  if (interrupted()) {
    fmt::print("interrupted: run the same command to resume\n");
    return 130;
  }
  print_results(store, sweep.name);
  return failed ? 1 : 0;
}

}  // namespace attnbench::sweep
