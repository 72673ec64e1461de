#include "harness/sweep/cell_eval.h"

#include "core/data/tokenizer.h"
#include "evals/decoder_lm_adapter.h"

namespace attnbench::sweep {

bool evaluate_checkpoint(const model::LoadedModel& loaded, const config::EvalConfig& eval,
                         const std::vector<std::string>& tasks, const CellEvalOptions& options,
                         const RecordTask& record, const std::function<bool()>& stop) {
  if (tasks.empty()) return true;
  evals::EvalOptions eo = evals::eval_options(eval);
  eo.progress = options.quiet ? nullptr : stderr;
  eo.log_samples = true;  // one row per request: a few MB per run, what paired tests need
  const data::Tokenizer tokenizer =
      data::Tokenizer::load(data::gpt2_tokenizer_dir(options.data_root.string()));
  const std::vector<evals::LoadedTask> loaded_tasks =
      evals::load_tasks(tasks, options.data_root, eval.limit, eval.task_limits);
  evals::DecoderLMAdapter lm(loaded.model, loaded.cfg.model);
  return evals::evaluate_tasks(
      lm, evals::text_encoder(tokenizer), loaded_tasks, eo,
      [&](const evals::LoadedTask& task, evals::TaskReport report) { record(task, report); },
      stop);
}

}  // namespace attnbench::sweep
