// Everything a training run checks before any work (docs/ARCHITECTURE.md, "Rules": bad input fails
// before any work): the config fits together and every shard exists, is a valid llm.c shard and
// holds only in-vocabulary tokens.
// Each problem is a UsageError (exit 2) naming the key or the file and what was expected.
#pragma once
#include <vector>

#include "core/config/run_config.h"
#include "core/data/shard.h"
#include "train/rank_agreement.h"

namespace attnbench::train {

struct TrainingData {
  std::vector<data::ShardReader> train;
  std::vector<data::ShardReader> val;  // empty when data.val = ""
};

// Checks the configuration alone (no files; data.train may be unset): batch_tokens a multiple of batch_size *
// context_length, Mask@k position inside the window and id inside the vocabulary, the device usable
// here (train.device = "cuda" without a GPU fails) and the precision possible on it (bf16: CUDA).
void check_training_config(const config::RunConfig& cfg);

// check_training_config, then opens and validates every shard. Throws UsageError.
TrainingData preflight(const config::RunConfig& cfg);

// What every rank of a data-parallel job must hold equal (train/rank_agreement.h): the
// config keys the run id covers, the run id itself, and each data split's shard count, token count
// and the XXH3-64 of its shards' checksums (the same paths can hold different files on two nodes).
RankIdentity rank_identity(const config::RunConfig& cfg, const TrainingData& data);

// Micro-batches per optimizer step: batch_tokens / (batch_size * context_length), 1 when
// batch_tokens is 0.
int64_t accumulation_steps(const config::TrainConfig& train, const config::ModelConfig& model);

}  // namespace attnbench::train
