// `attnbench results ...`: the read side of the results store (docs/results.md).
//   table   the paper-style table of a sweep (md | csv | latex | json)
//   compare every row of that table against a baseline row: each difference with its test, n, p
//   runs    one line per run;  show RUN: everything about one run;  curves RUN: a training curve
//   merge   fold per-cell databases (Slurm array tasks) into one
//   sql     one read-only SQL statement
//   export-tb  stored runs as TensorBoard event files, one folder per run
// Every query opens the database read-only (SQLITE_OPEN_READONLY: a missing path is an error, never
// a new file, and a read-only folder is fine); only merge writes (to its OUT).
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/common/error.h"
#include "core/common/output_path.h"
#include "harness/cli/command.h"
#include "results/compare.h"
#include "results/merge.h"
#include "results/query.h"
#include "results/runs.h"
#include "results/schema.h"
#include "results/sql.h"
#include "results/store.h"
#include "results/table.h"
#include "results/tensorboard_export.h"

namespace attnbench::cli::cmd_results {
namespace {

namespace r = attnbench::results;

struct Options {
  std::string db;
  std::string format;
  // table
  std::string sweep;
  std::vector<std::string> runs;  // instead of a sweep: run ids (prefixes)
  std::vector<std::string> rows, tasks, where;
  std::string metric = "auto";
  // compare
  std::string baseline;
  int64_t resamples = 10000;
  uint64_t seed = 0;
  bool details = false;
  // runs
  std::string status;
  // show, curves
  std::string run;
  std::string curve_metric = "train/loss";  // the trainer writes train/loss and val/loss
  // merge, export-tb
  std::string out;
  bool force = false;
  std::vector<std::string> inputs;
  // sql
  std::string sql;
};

// parse_metric_choice checks the value (with a did-you-mean) before the database opens.
constexpr const char* kMetricHelp =
    "auto (acc_norm where the task has it, else acc) | acc | acc_norm | logprob | bits_per_byte "
    "(the gold continuation's signals, docs/evaluation.md)";

void add_db_option(CLI::App* app, Options& o) {
  app->add_option("--db", o.db, "Results database (default: $ATTNBENCH_DB, else runs/attnbench.db)");
}

r::Store open_read_only(const Options& o) { return r::Store::open(r::default_db_path(o.db), true); }

std::vector<std::pair<std::string, std::string>> parse_where(const std::vector<std::string>& items) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& item : items) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw UsageError("--where: expected key=value (e.g. attention.variant=lazy), got '" + item + "'");
    }
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return out;
}

// A table's runs: a sweep's (--sweep) or the ones --runs names, by id or unique prefix. Exactly one
// of the two.
void select_members(const Options& o, r::Store& store, r::TableRequest& req) {
  if (o.sweep.empty() == o.runs.empty()) {
    throw UsageError("give --sweep NAME or --runs ID[,ID...] (standalone runs), one of the two");
  }
  req.sweep = o.sweep;
  for (const std::string& id : o.runs) req.runs.push_back(r::resolve_run_id(store.db(), id));
}

int run_table(const Options& o) {
  r::TableRequest req;
  req.rows = o.rows;
  req.tasks = o.tasks;
  req.metric = r::parse_metric_choice(o.metric);
  req.where = parse_where(o.where);
  // The format is checked before the database is opened: bad usage fails before any work.
  const r::TableFormat& format = r::find_table_format(o.format.empty() ? "md" : o.format);
  r::Store store = open_read_only(o);
  select_members(o, store, req);
  r::ResultTable table = r::build_table(store.db(), req);
  if (!o.baseline.empty()) {
    r::CompareRequest compare;  // compare's defaults, which the footnote states
    compare.table = req;
    compare.baseline = o.baseline;
    r::mark_against_baseline(store.db(), table, compare);
  }
  std::cout << format.render(table);
  return 0;
}

int run_compare(const Options& o) {
  r::CompareRequest req;
  req.table.rows = o.rows;
  req.table.tasks = o.tasks;
  req.table.metric = r::parse_metric_choice(o.metric);
  req.table.where = parse_where(o.where);
  req.baseline = o.baseline;
  req.resamples = o.resamples;
  req.seed = o.seed;
  const std::string format = o.format.empty() ? "table" : o.format;
  if (format != "table" && format != "csv" && format != "json") {  // before the database opens
    throw UsageError("--format: unknown format '" + format + "'" +
                     did_you_mean(format, {"table", "csv", "json"}) + "; valid: table, csv, json");
  }
  r::Store store = open_read_only(o);
  select_members(o, store, req.table);
  r::Comparison c = r::compare_to_baseline(store.db(), req);
  std::cout << (format == "table" ? r::render_comparison_text(c, o.details) : r::render_grid(c.grid, format));
  // Notes go to stderr, so that csv and json on stdout stay machine-readable.
  for (const std::string& note : c.notes) std::cerr << "note: " << note << ".\n";
  return 0;
}

int run_runs(const Options& o) {
  r::RunFilter filter;
  filter.sweep = o.sweep;
  if (!o.status.empty()) filter.status = r::parse_status(o.status);
  r::Store store = open_read_only(o);
  std::cout << r::render_grid(r::runs_grid(store, filter), o.format.empty() ? "table" : o.format);
  return 0;
}

int run_show(const Options& o) {
  std::string format = o.format.empty() ? "text" : o.format;
  if (format != "text" && format != "json") {
    throw UsageError("--format: unknown format '" + format + "'; valid: text, json");
  }
  r::Store store = open_read_only(o);
  nlohmann::json j = r::show_run(store, o.run);
  std::cout << (format == "json" ? j.dump(2) + "\n" : r::show_run_text(j));
  return 0;
}

int run_curves(const Options& o) {
  r::Store store = open_read_only(o);
  std::cout << r::render_grid(r::curve_grid(store, o.run, o.curve_metric),
                              o.format.empty() ? "csv" : o.format);
  return 0;
}

int run_merge(const Options& o) {
  std::vector<std::filesystem::path> inputs(o.inputs.begin(), o.inputs.end());
  r::MergeSummary m = r::merge_databases(o.out, inputs);
  if (inputs.empty()) {
    fmt::print("{} is ready (results schema version {})\n", o.out, r::current_schema_version());
    return 0;
  }
  // One line per row kind; every input row is counted once (results/merge.h).
  fmt::print("merged {} database(s) into {}\n", inputs.size(), o.out);
  for (const auto& [kind, c] : {std::pair{"runs", m.runs}, {"sweep memberships", m.memberships},
                                {"metrics", m.metrics}, {"evals", m.evals},
                                {"attention statistics", m.attn_stats}, {"samples", m.samples}}) {
    fmt::print("  {}: {} added, {} replaced, {} kept\n", kind, c.added, c.replaced, c.kept);
  }
  return 0;
}

int run_sql(const Options& o) {
  std::cout << r::render_grid(r::run_readonly_sql(r::default_db_path(o.db), o.sql),
                              o.format.empty() ? "table" : o.format);
  return 0;
}

int run_export_tb(const Options& o) {
  r::TensorBoardExport req{o.sweep, o.out, o.force};
  const std::filesystem::path db = r::default_db_path(o.db);
  refuse_output_over_inputs({"--out", o.out}, {{"--db", db}});
  r::check_export_folder(req);  // before the database is opened
  r::Store store = r::Store::open(db, true);
  for (const r::ExportedRun& run : r::export_tensorboard(store, req)) {
    fmt::print("{}: {} scalars of run {}\n", run.folder.string(), run.scalars, run.id);
  }
  return 0;
}

// The group; each subcommand registers under it (main runs the deepest parsed command).
const RegisterCommand reg_results(
    "results",
    "Query the results store: paper tables, runs, curves, merge, read-only SQL, TensorBoard files",
    [](CLI::App&) -> Action { return {}; });

const RegisterCommand reg_table("results", "table", "The paper-style table of a sweep or of runs",
                                [](CLI::App& cmd) -> Action {
  auto o = std::make_shared<Options>();
  cmd.add_option("--sweep", o->sweep, "Sweep name");
  cmd.add_option("--runs", o->runs,
                 "Instead of --sweep: these runs (ids or unique prefixes, comma-separated), e.g. "
                 "standalone `attnbench train` runs scored with `eval --db`")
      ->delimiter(',');
  cmd.add_option("--rows", o->rows,
                 "Param keys to group rows by (comma-separated; default: attention.variant plus "
                 "every param that varies in the sweep except train.seed)")
      ->delimiter(',');
  cmd.add_option("--metric", o->metric, kMetricHelp);
  cmd.add_option("--tasks", o->tasks, "Tasks to show, in this order (comma-separated)")
      ->delimiter(',');
  cmd.add_option("--baseline", o->baseline,
                 "Mark each cell better / worse than this row at p < 0.05 (the tests of `results "
                 "compare`): key=value[,key=value] over the row keys, or a run id (prefix)");
  cmd.add_option("--format", o->format, "md (default); one of " + join(r::table_format_names(), " | "));
  cmd.add_option("--where", o->where, "Keep runs whose param key=value (repeatable)");
  add_db_option(&cmd, *o);
  refuse_empty_values(cmd);
  return [o] { return run_table(*o); };
});

const RegisterCommand reg_compare(
    "results", "compare",
    "Every row of a sweep's table against a baseline row: paired tests over items (bootstrap, "
    "McNemar) and a one-sided Welch test over seeds, each with its n and p-value",
    [](CLI::App& cmd) -> Action {
  auto o = std::make_shared<Options>();
  cmd.add_option("--sweep", o->sweep, "Sweep name");
  cmd.add_option("--runs", o->runs, "Instead of --sweep: these runs (ids or prefixes, comma-separated)")
      ->delimiter(',');
  cmd.add_option("--baseline", o->baseline,
                 "The baseline row: key=value[,key=value] over the row keys (e.g. "
                 "attention.variant=softmax), or a run id (prefix) of that row")
      ->required();
  cmd.add_option("--rows", o->rows, "Param keys to group rows by, as in `results table`")
      ->delimiter(',');
  cmd.add_option("--metric", o->metric, std::string(kMetricHelp) + ": the seeds' test");
  cmd.add_option("--tasks", o->tasks, "Tasks to compare (comma-separated)")->delimiter(',');
  cmd.add_option("--where", o->where, "Keep runs whose param key=value (repeatable)");
  cmd.add_option("--resamples", o->resamples, "Paired bootstrap resamples (default 10000)")
      ->check(CLI::Range(int64_t{1}, int64_t{10000000}));
  cmd.add_option("--seed", o->seed, "Seed of the bootstrap's resampling (default 0)")
      ->check(int_in(0, std::numeric_limits<int64_t>::max()));  // CLI11 reads -1 as 2^64 - 1
  cmd.add_option("--format", o->format, "table (default) | csv | json");
  cmd.add_flag("--details", o->details,
               "Under each line of the table: the baseline and row values, unpaired se and the "
               "test's detail (csv and json always carry them)");
  add_db_option(&cmd, *o);
  refuse_empty_values(cmd);
  return [o] { return run_compare(*o); };
});

const RegisterCommand reg_runs("results", "runs", "List runs", [](CLI::App& cmd) -> Action {
  auto o = std::make_shared<Options>();
  cmd.add_option("--sweep", o->sweep, "Only runs of this sweep");
  cmd.add_option("--status", o->status,
                 "Only runs with this status (pending, running, finished, failed, diverged, "
                 "interrupted)");
  cmd.add_option("--format", o->format, "table (default) | csv | json");
  add_db_option(&cmd, *o);
  refuse_empty_values(cmd);
  return [o] { return run_runs(*o); };
});

const RegisterCommand reg_show("results", "show", "Config, metadata, final metrics and evals of a run",
                               [](CLI::App& cmd) -> Action {
  auto o = std::make_shared<Options>();
  cmd.add_option("run", o->run, "Run id (or a unique prefix)")->required();
  cmd.add_option("--format", o->format, "text (default) | json");
  add_db_option(&cmd, *o);
  refuse_empty_values(cmd);
  return [o] { return run_show(*o); };
});

const RegisterCommand reg_curves("results", "curves", "A training curve of a run (step, value, time)",
                                 [](CLI::App& cmd) -> Action {
  auto o = std::make_shared<Options>();
  cmd.add_option("run", o->run, "Run id (or a unique prefix)")->required();
  cmd.add_option("--metric", o->curve_metric,
                 "Metric key: train/loss (default) or val/loss, as the trainer writes them");
  cmd.add_option("--format", o->format, "csv (default) | json | table");
  add_db_option(&cmd, *o);
  refuse_empty_values(cmd);
  return [o] { return run_curves(*o); };
});

const RegisterCommand reg_merge("results", "merge",
                                "Merge databases (e.g. one per Slurm array task) into OUT: "
                                "the union of their rows; idempotent",
                                [](CLI::App& cmd) -> Action {
  auto o = std::make_shared<Options>();
  cmd.add_option("out", o->out, "Output database (created if missing)")->required();
  cmd.add_option("inputs", o->inputs, "Input databases (none: create OUT or upgrade its schema in place)");
  refuse_empty_values(cmd);
  return [o] { return run_merge(*o); };
});

const RegisterCommand reg_sql("results", "sql", "Run one read-only SQL statement",
                              [](CLI::App& cmd) -> Action {
  auto o = std::make_shared<Options>();
  cmd.add_option("query", o->sql, "The statement, e.g. \"SELECT * FROM runs\"")->required();
  cmd.add_option("--format", o->format, "table (default) | csv | json");
  add_db_option(&cmd, *o);
  refuse_empty_values(cmd);
  return [o] { return run_sql(*o); };
});

const RegisterCommand reg_export_tb(
    "results", "export-tb",
    "Stored runs as TensorBoard event files: one folder per run in --out, with its training "
    "curves, evaluation metrics and attention statistics",
    [](CLI::App& cmd) -> Action {
  auto o = std::make_shared<Options>();
  cmd.add_option("--out", o->out, "Output folder (one folder per run)")->required();
  cmd.add_option("--sweep", o->sweep, "Only the runs of this sweep (default: every run)");
  cmd.add_flag("--force", o->force, "Replace a non-empty --out folder");
  add_db_option(&cmd, *o);
  refuse_empty_values(cmd);
  return [o] { return run_export_tb(*o); };
});

}  // namespace
}  // namespace attnbench::cli::cmd_results
