// One training run into a run folder (docs/training.md): AdamW with warmup +
// cosine, gradient clipping and accumulation, on the CPU or CUDA (fp32, or bf16 autocast on CUDA);
// atomic checkpoints with exact resume;
// a divergence guard; progress; validation loss; metrics to a sink and to metrics.jsonl.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/config/run_config.h"
#include "train/distributed.h"
#include "train/metric_sink.h"
#include "train/preflight.h"
#include "model/decoder.h"

namespace attnbench::train {

struct TrainOptions {
  bool quiet = false;                // no progress output
  std::function<bool()> should_stop; // polled after every step: true = checkpoint and return
                                     // status "interrupted" (Ctrl-C)
  // Data-parallel training (docs/distributed.md): this rank's membership of the job, or null for
  // one process. The run trains on comm->device(); every rank computes, rank 0 alone writes the
  // run folder.
  Communicator* comm = nullptr;
  // Asked at every validation (step 0 included) with the model and the first validation window's
  // tokens [T]: named numbers logged at that step beside val/loss (the attention's sink mass and
  // learned statistics, evals/diagnostics/training_probe.h, set by the commands that train; the
  // trainer's layer cannot measure attention itself). Unset: nothing more is logged.
  std::function<std::vector<std::pair<std::string, double>>(model::CausalLMImpl&,
                                                            const torch::Tensor&)>
      attention_probe;
};

struct TrainResult {
  std::string status;  // finished | diverged | interrupted
  int64_t step = 0;    // optimizer steps completed (and kept in the checkpoint unless diverged)
  double train_loss = 0.0;  // the last step's loss (the non-finite one when diverged)
  double val_loss = 0.0;    // the last validation loss; NaN when there is no validation data
};

// Trains `cfg` in `run_dir` (every rank of a data-parallel job calls it), resuming from its checkpoint when there is one (the checkpoint's
// config must have the same run id, config::config_hash). Validates the config and every shard
// first (UsageError). Writes run_dir/{config.json, metrics.jsonl, status.json, checkpoint/}.
TrainResult train_run(const config::RunConfig& cfg, const std::filesystem::path& run_dir,
                      MetricSink* sink = nullptr, const TrainOptions& opts = {});
// The same on the shards preflight(cfg) returned: a data-parallel rank has them checked and their
// identity agreed with the other ranks' before it trains (train/rank_agreement.h).
TrainResult train_run(const config::RunConfig& cfg, TrainingData data,
                      const std::filesystem::path& run_dir, MetricSink* sink = nullptr,
                      const TrainOptions& opts = {});

}  // namespace attnbench::train
