// Registering a checkpoint that was trained outside any sweep in the results store, so that the
// rows `eval` and `attn-stats` write about it have a run to belong to.
#pragma once
#include <string>

#include "core/config/run_config.h"
#include "results/store.h"

namespace attnbench::cli {

// A finished standalone run under `run_id` (the config hash), with the flattened config as params
// and this process's metadata (`device`: model::device_description of where it runs); nothing
// happens when the store knows the run already.
void ensure_standalone_run(results::Store& store, const config::RunConfig& cfg,
                           const std::string& run_id, int threads,
                           const std::string& device = "cpu");

}  // namespace attnbench::cli
