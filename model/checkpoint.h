// A training checkpoint's content (docs/training.md): in one folder managed by checkpoint_dir.h
//   model.pt       the model's parameters and buffers (torch archive, by parameter name)
//   optimizer.pt   AdamW's state (moments and step counts per parameter) and its groups
//   rng.pt         the CPU generator state of LibTorch (+ the CUDA one for a run on CUDA)
//   state.json     step, data cursor, metrics.jsonl size, last losses, data fingerprint
//   config.json    the resolved config (config::to_json), from which load_checkpoint rebuilds the model
//   MANIFEST.json  sizes and checksums of the above, written last
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>

#include "core/config/run_config.h"
#include "model/decoder.h"

namespace attnbench::model {

struct TrainState {
  int64_t step = 0;           // optimizer steps done
  int64_t data_cursor = 0;    // training windows drawn (TrainWindows::cursor)
  int64_t metrics_bytes = -1; // size of metrics.jsonl when the checkpoint was taken
  double train_loss = std::numeric_limits<double>::quiet_NaN();
  double val_loss = std::numeric_limits<double>::quiet_NaN();
  uint64_t train_starts = 0;  // valid window starts in the training shards
  // data::contents_checksum of the training shards; absent in checkpoints written before it was
  // recorded, which resume on train_starts alone.
  std::optional<uint64_t> train_checksum;
  // A run continuing a pretrained model (model.init_from): the SHA-256 of the weights it started
  // from, as the folder held them then, and of the tokenizer.json it reads text with ("" otherwise,
  // and the latter in checkpoints written before it was recorded).
  std::string init_from_sha256;
  std::string init_from_tokenizer_sha256;
};

// Writes a complete checkpoint of `run_dir` atomically (stage, manifest, publish).
void save_checkpoint(const std::filesystem::path& run_dir, const config::RunConfig& cfg,
                     model::DecoderLMImpl& model, torch::optim::Optimizer& optimizer,
                     const TrainState& state);

// The resolved config stored in a checkpoint folder. Call verify_checkpoint (checkpoint_dir.h) on
// the folder first: neither function here reads an unverified checkpoint safely.
config::RunConfig read_checkpoint_config(const std::filesystem::path& dir);

// Loads a verified checkpoint folder into `model` and, when non-null, `optimizer` and the generator
// state; returns the training state. Tensors are read onto the device `model` is on (a checkpoint
// written on CPU or CUDA loads on either); move the model first, then restore.
TrainState restore_checkpoint(const std::filesystem::path& dir, model::DecoderLMImpl& model,
                              torch::optim::Optimizer* optimizer);

}  // namespace attnbench::model
