// A tiny softmax model with its optimizer, saved as checkpoints of a run folder of its own under
// the system's temporary folder (removed at the end): for the tests of checkpoint files and of
// loading checkpoints (tests/model, tests/evals).
#pragma once
#include <unistd.h>

#include <filesystem>
#include <string>

#include "core/config/run_config.h"
#include "model/checkpoint.h"
#include "model/decoder.h"

namespace attnbench::testing {

struct TinyCheckpoint {
  std::filesystem::path run;
  config::RunConfig cfg = config::parse_run_config(
      "[model]\npreset = \"tiny\"\nvocab_size = 32\ncontext_length = 16\n[attention]\n"
      "variant = \"softmax\"\nbackend = \"eager\"\n[data]\nfixed_token_id = 0\n",
      "test.toml");
  model::DecoderLM net{cfg};
  torch::optim::AdamW adamw{net->parameters()};

  explicit TinyCheckpoint(const std::string& name)
      : run(std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(run);
    std::filesystem::create_directories(run);
  }
  ~TinyCheckpoint() { std::filesystem::remove_all(run); }
  TinyCheckpoint(const TinyCheckpoint&) = delete;
  TinyCheckpoint& operator=(const TinyCheckpoint&) = delete;

  // Writes run/checkpoint from the model as it is now, at `step`.
  void save(int64_t step) {
    model::TrainState state;
    state.step = step;
    model::save_checkpoint(run, cfg, *net, adamw, state);
  }
  std::filesystem::path checkpoint() const { return run / "checkpoint"; }
};

}  // namespace attnbench::testing
