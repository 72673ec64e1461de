#include "harness/cli/standalone_run.h"

#include <torch/torch.h>

#include "harness/cli/runtime.h"

namespace attnbench::cli {

void ensure_standalone_run(results::Store& store, const config::RunConfig& cfg,
                           const std::string& run_id, int threads, const std::string& device) {
  if (store.run(run_id)) return;
  std::vector<results::Param> params;
  for (const auto& [key, value] : config::flatten(cfg)) {
    params.push_back({key, config::to_string(value), config::type_name(config::type_of(value))});
  }
  results::RunMetadata meta;
  meta.device = device;
  meta.blas = loaded_blas();
  meta.threads = threads;
  meta.attnbench_version = ATTNBENCH_VERSION;
  meta.torch_version = TORCH_VERSION;
  auto claim = store.claim_run(run_id, "", "", config::canonical_json(cfg), params, meta);
  if (claim.claimed) store.set_status(run_id, results::RunStatus::Finished);
}

}  // namespace attnbench::cli
