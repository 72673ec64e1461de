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
};

// Throws UsageError when DIR holds no complete checkpoint or fails verification.
LoadedModel load_model(const std::filesystem::path& dir);

}  // namespace attnbench::model
