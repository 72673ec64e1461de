#include "harness/sweep/cell_eval.h"

#include <algorithm>
#include <utility>

#include "evals/decoder_lm_adapter.h"

namespace attnbench::sweep {

namespace {

// The lengths among `names` in order of first appearance (0 = the model's), each with its tasks.
std::vector<std::pair<int64_t, std::vector<std::string>>> by_length(const std::vector<std::string>& names) {
  std::vector<std::pair<int64_t, std::vector<std::string>>> out;
  for (const std::string& name : names) {
    const evals::TaskAtLength t = evals::parse_task_at_length(name);
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& g) { return g.first == t.length; });
    if (it == out.end()) it = out.insert(out.end(), {t.length, {}});
    it->second.push_back(t.task);
  }
  return out;
}

}  // namespace

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
  // Every length is checked and every task's data read before the first forward pass; a task
  // scored at several lengths is read once.
  const auto lengths = by_length(tasks);
  std::vector<std::string> distinct;
  for (const auto& [length, names] : lengths) {
    for (const std::string& name : names) {
      if (std::find(distinct.begin(), distinct.end(), name) == distinct.end()) distinct.push_back(name);
    }
  }
  const std::vector<evals::LoadedTask> loaded =
      evals::load_tasks(distinct, options.data_root, eval.limit, eval.task_limits);
  std::vector<std::pair<evals::DecoderLMAdapter, std::vector<evals::LoadedTask>>> groups;
  for (const auto& [length, names] : lengths) {
    std::vector<evals::LoadedTask> group;
    for (const std::string& name : names) {
      group.push_back(loaded[std::find(distinct.begin(), distinct.end(), name) - distinct.begin()]);
    }
    groups.emplace_back(evals::DecoderLMAdapter(scored.model, length), std::move(group));
  }
  for (auto& [lm, loaded_tasks] : groups) {
    const bool done = evals::evaluate_tasks(
        lm, encode, loaded_tasks, eo,
        [&](const evals::LoadedTask& task, evals::TaskReport report) { record(task, report); }, stop);
    if (!done) return false;
  }
  return true;
}

}  // namespace attnbench::sweep
