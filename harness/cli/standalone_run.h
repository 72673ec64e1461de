// What `eval` and `attn-stats` share about the model they read: registering it, when it was trained
// outside any sweep or imported from a Hugging Face folder, in the results store so that the rows
// they write about it have a run to belong to.
#pragma once
#include "evals/scored_model.h"
#include "results/store.h"

namespace attnbench::cli {

// A finished standalone run under `model.run_id`, with the model's config JSON and params
// (ScoredModel::params) and this process's metadata; nothing happens when the store knows the run.
void ensure_standalone_run(results::Store& store, const evals::ScoredModel& model, int threads);

}  // namespace attnbench::cli
