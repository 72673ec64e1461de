// What `eval` and `attn-stats` share about the checkpoint they read: whether it can read GPT-2
// text, and registering it, when it was trained outside any sweep, in the results store so that
// the rows they write about it have a run to belong to.
#pragma once
#include <string>

#include "core/config/run_config.h"
#include "results/store.h"

namespace attnbench::cli {

// A finished standalone run under `run_id` (the config hash), with the flattened config as params
// and this process's metadata (`device`: model::device_description of where it runs); nothing
// happens when the store knows the run already.
// UsageError unless the model's vocabulary holds every GPT-2 token id: a model trained on
// synthetic tokens (a small model.vocab_size) would index past its embedding. `command` names the
// command in the message.
void require_gpt2_vocabulary(const config::ModelConfig& model, const std::string& command);

void ensure_standalone_run(results::Store& store, const config::RunConfig& cfg,
                           const std::string& run_id, int threads,
                           const std::string& device = "cpu");

}  // namespace attnbench::cli
