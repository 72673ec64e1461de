#include "harness/sweep/cell_eval.h"

#include "evals/decoder_lm_adapter.h"

namespace attnbench::sweep {

bool evaluate_checkpoint(const evals::ScoredModel& scored, const config::EvalConfig& eval,
                         const std::vector<std::string>& tasks, const CellEvalOptions& options,
                         const RecordTask& record, const std::function<bool()>& stop) {
  if (tasks.empty()) return true;
  evals::EvalOptions eo = evals::eval_options(eval);
  // The model's own BOS policy and prefix token: an attnbench model's are its config's eval.bos
  // (the same config), an imported model's its tokenizer's (docs/pretrained.md).
  eo.bos = scored.options.bos;
  eo.prefix_token = scored.options.prefix_token;
  eo.progress = options.quiet ? nullptr : stderr;
  eo.log_samples = true;  // one row per request: a few MB per run, what paired tests need
  const evals::TextEncoder encode = evals::text_encoder(scored.tokenizer());
  const std::vector<evals::LoadedTask> loaded_tasks =
      evals::load_tasks(tasks, options.data_root, eval.limit, eval.task_limits);
  evals::DecoderLMAdapter lm(scored.model);
  return evals::evaluate_tasks(
      lm, encode, loaded_tasks, eo,
      [&](const evals::LoadedTask& task, evals::TaskReport report) { record(task, report); },
      stop);
}

}  // namespace attnbench::sweep
