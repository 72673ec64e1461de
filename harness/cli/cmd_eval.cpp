// `attnbench eval`: zero-shot evaluation of a checkpoint with lm-evaluation-harness's protocol
// (docs/evaluation.md). Results print as a table or JSON and, when a results store is configured
// (--db or $ATTNBENCH_DB), go to its evals table keyed by (run, task, metric).
#include <torch/torch.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/common/output_path.h"
#include "core/common/paths.h"
#include "core/config/run_config.h"
#include "evals/eval_plan.h"
#include "evals/evaluator.h"
#include "evals/scored_model.h"
#include "harness/cli/command.h"
#include "harness/cli/runtime.h"
#include "harness/cli/standalone_run.h"
#include "results/store.h"

namespace attnbench::cli::cmd_eval {
namespace {

struct Options {
  std::string checkpoint;
  std::string tasks;
  int64_t limit = -1;       // -1 = the checkpoint config's eval.limit
  int64_t batch_size = 0;   // 0 = the checkpoint config's eval.batch_size
  std::string format = "table";
  bool log_samples = false;
  bool no_prefix_reuse = false;
  std::string dump_requests;
  int64_t context = 0;
  std::string bos;          // "" = the checkpoint config's eval.bos
  std::string data_dir;
  std::string db;
  int64_t bootstrap_iters = evals::kDefaultBootstrapIters;
  int threads = 0;
  std::string device;  // "" = the checkpoint config's train.device
};

nlohmann::json report_json(const evals::EvalReport& report, const std::string& run_id,
                           int64_t step) {
  nlohmann::json results = nlohmann::json::object(), tasks = nlohmann::json::array();
  for (const auto& t : report.tasks) {
    nlohmann::json r = nlohmann::json::object(), metrics = nlohmann::json::array();
    for (const auto& m : t.metrics) {
      // lm-eval's result keys: "<metric>,<filter>" and "<metric>_stderr,<filter>".
      r[m.name + ",none"] = m.value;
      r[m.name + "_stderr,none"] = m.std_error ? nlohmann::json(*m.std_error) : nlohmann::json("N/A");
      metrics.push_back({{"name", m.name},
                         {"value", m.value},
                         {"stderr", m.std_error ? nlohmann::json(*m.std_error) : nlohmann::json()}});
    }
    results[t.task] = r;
    tasks.push_back({{"task", t.task},
                     {"n", t.n},
                     {"requests", t.requests},
                     {"metrics", metrics},
                     {"seconds", t.seconds},
                     {"forward_seconds", t.forward.forward_seconds},
                     {"forward_calls", t.forward.forward_calls},
                     {"tokens", t.forward.tokens},
                     {"tokens_full", t.forward.tokens_full}});
  }
  return {{"run_id", run_id},  {"step", step},   {"protocol", report.protocol},
          {"bos", evals::to_string(report.bos)}, {"limit", report.limit},
          {"results", results}, {"tasks", tasks}};
}

// --dump-requests: every request as lm-eval's Instance.arguments, one JSON object a line.
void write_requests(std::ofstream& out, const evals::LoadedTask& t) {
  for (const auto& r : evals::request_records(t.spec->name, t.spec->type, t.docs)) {
    out << nlohmann::json{{"task", r.task},
                          {"doc_id", r.doc},
                          {"request", r.request},
                          {"context", r.context},
                          {"continuation", r.continuation}}
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  }
}

void write_requests(const std::string& path, const std::vector<evals::EvalGroup>& plan) {
  std::ofstream out(path);
  if (!out) throw UsageError("--dump-requests " + path + ": cannot write");
  for (const evals::EvalGroup& group : plan) {
    for (const evals::LoadedTask& t : group.tasks) write_requests(out, t);
  }
}

void print_table(const evals::EvalReport& report) {
  fmt::print("{:<16} {:<16} {:>10} {:>10} {:>7}\n", "task", "metric", "value", "stderr", "n");
  for (const auto& t : report.tasks) {
    for (const auto& m : t.metrics) {
      fmt::print("{:<16} {:<16} {:>10.4f} {:>10} {:>7}\n", t.task, m.name, m.value,
                 m.std_error ? fmt::format("{:.4f}", *m.std_error) : "N/A", t.n);
    }
  }
  fmt::print("protocol {}, bos {}{}\n", report.protocol, evals::to_string(report.bos),
             report.limit > 0 ? fmt::format(", limit {} (not comparable to full runs)", report.limit)
                              : "");
}

// The run's scoring options (evals/eval_plan.h, as a sweep's cell scores it) with the command
// line's over them.
evals::EvalOptions eval_options(const Options& o, const evals::ScoredModel& scored,
                                const config::EvalConfig& ec) {
  evals::EvalOptions opt = evals::evaluation_options(scored, ec);
  if (o.batch_size > 0) opt.batch_size = o.batch_size;
  if (!o.bos.empty()) opt.bos = evals::parse_bos_policy(o.bos);
  opt.bootstrap_iters = o.bootstrap_iters;
  opt.log_samples = o.log_samples;
  opt.reuse_prefixes = !o.no_prefix_reuse;
  opt.progress = stderr;
  return opt;
}

// A stored task scored with another identity (limit, protocol, BOS) is refused before any scoring,
// not replaced after it (results/store.h).
void require_stored_identity(results::Store& store, const std::string& run_id,
                             const std::vector<evals::LoadedTask>& tasks,
                             const evals::LanguageModel& lm, const evals::EvalOptions& opt) {
  for (const evals::LoadedTask& task : tasks) {
    results::EvalRow planned;
    planned.task = evals::scored_task_name(task.spec->name, lm);
    planned.limit = task.limit;
    planned.protocol_version = evals::kProtocolVersion;
    planned.bos = evals::to_string(opt.bos);
    store.require_same_identity(run_id, planned);
  }
}

// The run's own plan (evals/eval_plan.h: its [eval]'s tasks at every length, limit and per-task
// limits, as its sweep scored it) unless a flag says otherwise, every answer checked against its
// length before the first forward pass: an answer longer than the context cannot be scored
// (lm-eval refuses it too).
std::vector<evals::EvalGroup> checked_plan(const Options& o, const evals::ScoredModel& scored,
                                           const config::EvalConfig& ec, const evals::EvalOptions& opt,
                                           const evals::TextEncoder& encode) {
  evals::EvalRequest request;
  if (!o.tasks.empty()) request.tasks = evals::expand_task_list(o.tasks);
  request.limit = o.limit;
  request.context = o.context;
  std::vector<evals::EvalGroup> plan = evals::plan_evaluation(scored, ec, request, data_root(o.data_dir));
  for (const evals::EvalGroup& group : plan) {
    for (const evals::LoadedTask& task : group.tasks) {
      evals::require_answers_fit(task, encode, opt, group.model.max_length());
    }
  }
  return plan;
}

int run(Options o) {
  if (o.format != "table" && o.format != "json") {
    throw UsageError("--format " + o.format + ": expected table or json" +
                     did_you_mean(o.format, {"table", "json"}));
  }
  const int threads = init_threads(o.threads);
  const evals::ScoredModel scored = evals::load_scored_model(o.checkpoint, o.device, "--device", o.data_dir);
  evals::require_text(scored, "eval");
  const bool want_store = !o.db.empty() || std::getenv("ATTNBENCH_DB") != nullptr;
  const std::filesystem::path db = want_store ? results::default_db_path(o.db) : "";
  if (!o.dump_requests.empty()) {
    refuse_output_over_inputs({"--dump-requests", o.dump_requests},
                              {{"the checkpoint", scored.source}, {"--db", db}});
  }
  // An imported model has no [eval] section: lm-eval's defaults, the tasks of the paper.
  const config::EvalConfig ec = scored.cfg ? scored.cfg->eval : config::EvalConfig{};
  const evals::EvalOptions opt = eval_options(o, scored, ec);
  const evals::TextEncoder encode = evals::text_encoder(scored.tokenizer());
  std::vector<evals::EvalGroup> plan = checked_plan(o, scored, ec, opt, encode);
  std::unique_ptr<results::Store> store;
  if (want_store) store = std::make_unique<results::Store>(results::Store::open(db));

  if (!o.dump_requests.empty()) write_requests(o.dump_requests, plan);

  if (store) {
    for (const evals::EvalGroup& group : plan) {
      require_stored_identity(*store, scored.run_id, group.tasks, group.model, opt);
    }
  }
  evals::EvalReport report;
  report.bos = opt.bos;
  report.limit = o.limit >= 0 ? o.limit : ec.limit;
  if (store) ensure_standalone_run(*store, scored, threads);
  evals::run_evaluation(plan, encode, opt, [&](const evals::LoadedTask& task, evals::TaskReport t) {
    if (store) {  // each task is one transaction, written as soon as it is done
      store->record_task(scored.run_id, evals::eval_rows(t, task.limit, opt.bos), evals::sample_rows(t));
    }
    report.tasks.push_back(std::move(t));
  });

  if (o.format == "json") {
    std::cout << report_json(report, scored.run_id, scored.step).dump(2) << "\n";
  } else {
    fmt::print("run {} step {} ({})\n", scored.run_id, scored.step, scored.source.string());
    print_table(report);
  }
  return 0;
}

RegisterCommand reg(
    "eval", "Zero-shot evaluation of a checkpoint with lm-evaluation-harness's protocol",
    [](CLI::App& app) {
      auto o = std::make_shared<Options>();
      app.add_option("--checkpoint", o->checkpoint,
                     "run folder, checkpoint folder or Hugging Face model folder")
          ->required();
      app.add_option("--tasks", o->tasks,
                     "comma-separated task names, 'paper' (the nine of the paper's tables) or "
                     "'all' (default: the run's eval.tasks at its length and at every "
                     "eval.contexts length, as its sweep scored them; else paper)");
      app.add_option("--limit", o->limit,
                     "score only the first N documents of every task (default: the run's eval.limit "
                     "and eval.task_limits)")
          ->check(int_in(0));
      app.add_option("--batch-size", o->batch_size, "model rows per forward pass")
          ->check(int_in(1));
      app.add_option("--format", o->format, "table | json");
      app.add_flag("--log-samples", o->log_samples,
                   "store every request's log-likelihood in the samples table");
      app.add_flag("--no-prefix-reuse", o->no_prefix_reuse,
                   "score every request as a full row, as lm-eval does (default: a context "
                   "shared by several requests is computed once)");
      app.add_option("--context", o->context,
                     "score at this many tokens (lm-eval's max_length), beyond the training "
                     "context too: length extrapolation, stored as task@N, for every task named without "
                     "@N (default: the model's)")
          ->check(int_in(1));
      app.add_option("--dump-requests", o->dump_requests,
                     "write every (task, doc_id, context, continuation) as JSONL");
      app.add_option("--bos", o->bos, "BOS policy: none | prepend (default: the config's eval.bos)");
      app.add_option("--data-dir", o->data_dir, "data root (default: $ATTNBENCH_DATA)");
      app.add_option("--db", o->db, "results database (default: $ATTNBENCH_DB; none when unset)");
      app.add_option("--bootstrap-iters", o->bootstrap_iters,
                     "bootstrap resamples for the perplexity stderr (lm-eval's default 100000; "
                     "0 = none)")
          ->check(int_in(0));
      app.add_option("--threads", o->threads, "intra-op threads (default: $OMP_NUM_THREADS, else all)")
          ->check(int_in(0, std::numeric_limits<int>::max()));
      app.add_option("--device", o->device,
                     "auto | cpu | cuda (default: the checkpoint config's train.device; cpu for a "
                     "Hugging Face folder)");
      refuse_empty_values(app);
      return [o] { return run(*o); };
    });

}  // namespace
}  // namespace attnbench::cli::cmd_eval
