// The one way to load a trained model (evaluation, export, diagnostics, a sweep's cells): DIR names
// either a run folder (its current checkpoint is used, model/checkpoint_dir.h) or a checkpoint
// folder itself. The
// checkpoint is verified against its manifest before anything is read.
#pragma once
#include <cstdint>
#include <filesystem>

#include "core/config/run_config.h"
#include "model/decoder.h"

namespace attnbench::model {

struct LoadedModel {
  config::RunConfig cfg;
  model::DecoderLM model{nullptr};
  int64_t step = 0;
  std::filesystem::path checkpoint;  // the folder actually read
  torch::Device device{torch::kCPU};  // where `model` is
  // model.init_from's tokenizer.json as the run started (TrainState; "" when not recorded).
  std::string init_from_tokenizer_sha256;
};

// Throws UsageError when DIR holds no complete checkpoint or fails verification. The model is on
// the CPU.
LoadedModel load_model(const std::filesystem::path& dir);

// The same, then moved to the device `device_setting` names (auto | cpu | cuda; "" = the
// checkpoint's train.device) with the checkpoint's numerics (tf32, deterministic) applied: the way
// eval, attn-stats and a sweep's cells run a trained model. A device that is not usable here is a
// UsageError naming `device_key` (the option that chose it), raised before the weights are read.
LoadedModel load_model(const std::filesystem::path& dir, const std::string& device_setting,
                       const std::string& device_key = "train.device");

}  // namespace attnbench::model
