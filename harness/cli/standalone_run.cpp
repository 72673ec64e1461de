#include "harness/cli/standalone_run.h"

#include <torch/torch.h>

#include <fmt/format.h>

#include "core/common/error.h"
#include "core/data/tokenizer.h"
#include "harness/cli/runtime.h"

namespace attnbench::cli {

void require_gpt2_vocabulary(const config::ModelConfig& model, const std::string& command) {
  const int64_t gpt2 = int64_t{data::Tokenizer::kEndOfText} + 1;
  if (model.vocab_size >= gpt2) return;
  throw UsageError(fmt::format("{}: the checkpoint's model.vocab_size = {} is smaller than the GPT-2 "
                               "tokenizer's {}; it cannot read text (train on GPT-2 tokens to "
                               "evaluate on text)",
                               command, model.vocab_size, gpt2));
}

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
