// attnbench train --config FILE [--set k=v ...] [--init-from DIR] --out DIR [--dry-run] [--quiet]
//                 [--nproc-per-node N] [--dist-timeout SECONDS]
// Trains one model into DIR (resuming from its checkpoint when there is one). --dry-run validates
// everything, prints the resolved config and the parameter counts (constructed model and closed
// form), and trains nothing. Data-parallel (docs/distributed.md): --nproc-per-node N starts N local
// ranks; under torchrun or srun this process is one rank of the job. Exit codes: 0 finished, 1 diverged or runtime failure, 2 bad usage,
// config or data, 130 interrupted (Ctrl-C or SIGTERM, as a scheduler's time limit or preemption
// sends it: checkpoint written at the end of the step, the same command resumes).
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <filesystem>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/common/stop_signal.h"
#include "core/config/run_config.h"
#include "evals/diagnostics/training_probe.h"
#include "harness/cli/command.h"
#include "harness/cli/runtime.h"
#include "train/distributed.h"
#include "train/launch.h"
#include "train/preflight.h"
#include "train/trainer.h"
#include "kernels/torch_compat.h"
#include "model/decoder.h"
#include "model/device.h"
#include "model/param_count.h"

namespace attnbench::cli::cmd_train {
namespace {

struct TrainCliOptions {
  std::string config;
  std::vector<std::string> sets;
  std::string init_from;  // model.init_from (docs/pretrained.md, "Continuing a pretrained model")
  std::string out;
  bool dry_run = false;
  bool quiet = false;
  int nproc_per_node = 0;  // 0: not a launcher
  bool oversubscribe = false;  // more CPU ranks than cores
  int dist_timeout = 300;  // seconds a collective may wait for the other ranks
};

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

// The command a launcher's ranks run: this one, less --nproc-per-node.
std::vector<std::string> rank_args(const TrainCliOptions& o) {
  std::vector<std::string> args = {std::filesystem::read_symlink("/proc/self/exe").string(),
                                   "train", "--config", o.config, "--out", o.out,
                                   "--dist-timeout", std::to_string(o.dist_timeout)};
  for (const auto& kv : o.sets) args.insert(args.end(), {"--set", kv});
  if (!o.init_from.empty()) args.insert(args.end(), {"--init-from", o.init_from});
  if (o.quiet) args.push_back("--quiet");
  return args;
}

// --nproc-per-node: everything the ranks would refuse is refused here, once, before they start.
int launch(const TrainCliOptions& o, const config::RunConfig& cfg) {
  train::preflight(cfg);
  train::check_ranks(cfg, o.nproc_per_node, o.nproc_per_node,
                     fmt::format("--nproc-per-node {}", o.nproc_per_node), o.oversubscribe);
  return train::run_local_ranks(rank_args(o), o.nproc_per_node,
                                std::chrono::seconds(o.dist_timeout));
}

// One rank's device: its own GPU when the run trains on CUDA, cuda:LOCAL_RANK, or cuda:0 when the
// launcher gave each rank one GPU (srun --gpus-per-task=1 sets CUDA_VISIBLE_DEVICES per task). On
// the CPU the machine's threads are split between its ranks unless train.threads or
// OMP_NUM_THREADS says.
torch::Device rank_device(const config::RunConfig& cfg, const train::RankEnv& env) {
  torch::Device device = model::resolve_device(cfg.train.device);
  if (device.is_cuda()) {
    const int visible = static_cast<int>(torch::cuda::device_count());
    if (visible > 1 && env.local_rank >= visible) {
      throw UsageError(fmt::format("rank {}: local rank {} has no GPU of its own (this machine "
                                   "has {}); one GPU per rank",
                                   env.rank, env.local_rank, visible));
    }
    const int index = visible == 1 ? 0 : env.local_rank;
    device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
    kernels::set_current_cuda_device(device.index());
  } else if (cfg.train.threads <= 0 && !std::getenv("OMP_NUM_THREADS")) {
    init_threads(std::max(1, static_cast<int>(std::thread::hardware_concurrency()) /
                                 env.local_world_size));
  }
  return device;
}

train::TrainResult train_here(const TrainCliOptions& o, const config::RunConfig& cfg,
                              train::TrainingData data, train::Communicator* comm) {
  const StopSignals signals;  // the first Ctrl-C checkpoints and stops (core/common/stop_signal.h)
  train::TrainOptions opts;
  opts.quiet = o.quiet;
  opts.should_stop = [] { return stop_requested(); };
  opts.comm = comm;
  opts.attention_probe = evals::diagnostics::training_probe;
  return train::train_run(cfg, std::move(data), o.out, nullptr, opts);
}

// --init-from DIR is --set model.init_from = "DIR", the path written as a TOML string.
std::vector<std::string> config_sets(const TrainCliOptions& o) {
  std::vector<std::string> sets = o.sets;
  if (o.init_from.empty()) return sets;
  std::string quoted = "\"";
  for (char c : o.init_from) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  sets.push_back("model.init_from=" + quoted + "\"");
  return sets;
}

int run_train(const TrainCliOptions& o) {
  config::RunConfig cfg = config::load_run_config(o.config, config_sets(o));
  train::check_training_config(cfg);
  init_threads(static_cast<int>(cfg.train.threads));
  if (o.dry_run) return dry_run(cfg);
  if (o.out.empty()) throw UsageError("--out DIR is required (the run folder)");
  if (o.nproc_per_node > 0) return launch(o, cfg);

  const train::RankEnv env = train::rank_env();
  train::TrainingData data = train::preflight(cfg);  // before the rendezvous: its identity is agreed
  std::unique_ptr<train::Communicator> comm;
  if (env.distributed()) {
    train::check_ranks(cfg, env.world_size, 0, fmt::format("rank {}", env.rank));
    comm = std::make_unique<train::Communicator>(env, rank_device(cfg, env),
                                                 std::chrono::seconds(o.dist_timeout),
                                                 train::rank_identity(cfg, data));
  }
  train::TrainResult r = train_here(o, cfg, std::move(data), comm.get());
  if (!comm || comm->rank() == 0) {
    fmt::print("{}: step {}, train loss {:.4f}, val loss {:.4f}, run folder {}\n", r.status,
               r.step, r.train_loss, r.val_loss, o.out);
  }
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
  app.add_option("--config", o->config,
                 "Run config (TOML, or a run folder's resolved config.json)")->required();
  app.add_option("--set", o->sets, "Override a config key: section.key=value (repeatable)");
  app.add_option("--init-from", o->init_from,
                 "Start from a Hugging Face Llama-family model folder's weights (model.init_from)");
  app.add_option("--out", o->out, "Run folder (checkpoint, metrics.jsonl, status.json)");
  app.add_flag("--dry-run", o->dry_run,
               "Validate, print the resolved config and parameter counts, train nothing");
  app.add_flag("--quiet", o->quiet, "No progress output");
  app.add_option("--nproc-per-node", o->nproc_per_node,
                 "Data-parallel: start N local ranks (one GPU each on CUDA; docs/distributed.md)")
      ->check(int_in(1, 1024));
  app.add_flag("--oversubscribe", o->oversubscribe,
               "Start more CPU ranks than this machine has cores (refused otherwise)");
  app.add_option("--dist-timeout", o->dist_timeout,
                 "Seconds a rank waits in a collective before giving up on a hung peer (default "
                 "300)")
      ->check(int_in(1, 86400));
  refuse_empty_values(app);
  return [o] { return run_train(*o); };
});

}  // namespace
}  // namespace attnbench::cli::cmd_train
