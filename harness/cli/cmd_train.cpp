// attnbench train --config FILE [--set k=v ...] --out DIR [--dry-run] [--quiet]
// Trains one model into DIR (resuming from its checkpoint when there is one). --dry-run validates
// everything, prints the resolved config and the parameter counts (constructed model and closed
// form), and trains nothing. Exit codes: 0 finished, 1 diverged or runtime failure, 2 bad usage,
// config or data, 130 interrupted (Ctrl-C: checkpoint written, the same command resumes).
#include <torch/torch.h>

#include <atomic>
#include <csignal>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/config/run_config.h"
#include "harness/cli/command.h"
#include "harness/cli/runtime.h"
#include "harness/train/preflight.h"
#include "harness/train/trainer.h"
#include "model/decoder.h"
#include "model/param_count.h"

namespace attnbench::cli {
namespace {

struct TrainCliOptions {
  std::string config;
  std::vector<std::string> sets;
  std::string out;
  bool dry_run = false;
  bool quiet = false;
};

std::atomic<bool> g_interrupted{false};

extern "C" void on_sigint(int) {
  g_interrupted = true;
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process at once
}

int dry_run(const config::RunConfig& cfg) {
  // Validate what the run would read, so a dry run catches bad shards too; a config without data
  // still shows its model.
  if (cfg.data.train.empty()) {
    fmt::print(stderr, "note: data.train is not set; training would stop here\n");
  } else {
    train::preflight(cfg);
  }
  std::cout << config::to_json(cfg).dump(2) << "\n";
  model::DecoderLM model(cfg);
  const int64_t built = model->num_parameters();
  const int64_t closed = model::closed_form_parameter_count(cfg.model, cfg.attention);
  fmt::print("run id: {}\n", config::config_hash(cfg));
  fmt::print("parameters: {} (constructed model)\n", built);
  fmt::print("parameters: {} (closed form)\n", closed);
  fmt::print("accumulation: {} micro-batch(es) of {} x {} tokens per step\n",
             train::accumulation_steps(cfg.train, cfg.model), cfg.train.batch_size,
             cfg.model.context_length);
  if (built != closed) {
    throw std::runtime_error(fmt::format(
        "constructed parameter count {} differs from the closed form {}", built, closed));
  }
  return 0;
}

int run_train(const TrainCliOptions& o) {
  config::RunConfig cfg = config::load_run_config(o.config, o.sets);
  train::check_training_config(cfg);
  init_threads(static_cast<int>(cfg.train.threads));
  if (o.dry_run) return dry_run(cfg);
  if (o.out.empty()) throw UsageError("--out DIR is required (the run folder)");

  std::signal(SIGINT, on_sigint);
  train::TrainOptions opts;
  opts.quiet = o.quiet;
  opts.should_stop = [] { return g_interrupted.load(); };
  train::TrainResult r = train::train_run(cfg, o.out, nullptr, opts);
  std::signal(SIGINT, SIG_DFL);
  fmt::print("{}: step {}, train loss {:.4f}, val loss {:.4f}, run folder {}\n", r.status, r.step,
             r.train_loss, r.val_loss, o.out);
  if (r.status == "diverged") {
    throw std::runtime_error(fmt::format(
        "training diverged at step {} (non-finite loss or gradient); the last good checkpoint in "
        "{} is kept",
        r.step + 1, o.out));
  }
  return r.status == "interrupted" ? 130 : 0;
}

RegisterCommand reg("train", "Train one model from a run config", [](CLI::App& app) {
  auto o = std::make_shared<TrainCliOptions>();
  app.add_option("--config", o->config, "Run config (TOML)")->required();
  app.add_option("--set", o->sets, "Override a config key: section.key=value (repeatable)");
  app.add_option("--out", o->out, "Run folder (checkpoint, metrics.jsonl, status.json)");
  app.add_flag("--dry-run", o->dry_run,
               "Validate, print the resolved config and parameter counts, train nothing");
  app.add_flag("--quiet", o->quiet, "No progress output");
  return [o] { return run_train(*o); };
});

}  // namespace
}  // namespace attnbench::cli
