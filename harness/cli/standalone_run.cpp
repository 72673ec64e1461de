#include "harness/cli/standalone_run.h"

#include <torch/torch.h>

#include "harness/cli/runtime.h"
#include "model/device.h"

namespace attnbench::cli {

void ensure_standalone_run(results::Store& store, const evals::ScoredModel& model, int threads) {
  evals::check_stored_tokenizer(store, model);
  if (store.run(model.run_id)) return;
  results::RunMetadata meta;
  meta.device = model::device_description(model.device);
  meta.blas = loaded_blas();
  meta.threads = threads;
  meta.attnbench_version = ATTNBENCH_VERSION;
  meta.torch_version = TORCH_VERSION;
  results::PendingRun run;
  run.id = model.run_id;
  run.config_json = model.config_json();
  run.params = model.params();
  auto claim = store.claim_run("", run, meta);
  if (claim.claimed) store.set_status(model.run_id, results::RunStatus::Finished);
}

}  // namespace attnbench::cli
