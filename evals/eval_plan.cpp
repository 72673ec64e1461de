#include "evals/eval_plan.h"

#include <algorithm>

#include "core/common/error.h"
#include "evals/tasks/task.h"

namespace attnbench::evals {

std::vector<std::string> scored_task_names(const config::EvalConfig& eval, int64_t trained_length) {
  std::vector<int64_t> lengths = {trained_length};
  for (int64_t n : eval.contexts) {
    if (std::find(lengths.begin(), lengths.end(), n) == lengths.end()) lengths.push_back(n);
  }
  std::vector<std::string> names;
  for (int64_t length : lengths) {
    for (const std::string& task : eval.tasks) names.push_back(task_at_length(task, length, trained_length));
  }
  return names;
}

EvalOptions evaluation_options(const ScoredModel& scored, const config::EvalConfig& eval) {
  EvalOptions o = eval_options(eval);
  o.bos = scored.options.bos;
  o.prefix_token = scored.options.prefix_token;
  return o;
}

std::vector<EvalGroup> plan_evaluation(const ScoredModel& scored, const config::EvalConfig& eval,
                                       const EvalRequest& request, const std::filesystem::path& data_root) {
  const model::LMShape shape = scored.model->shape();
  std::vector<std::string> names = request.tasks;
  if (names.empty()) {
    names = eval.tasks.empty() ? expand_task_list("paper") : scored_task_names(eval, shape.context_length);
  }
  // The lengths (checked here, before any task is read) with their tasks, and the distinct tasks.
  std::vector<std::pair<int64_t, std::vector<std::string>>> lengths;
  std::vector<std::string> distinct;
  for (const std::string& name : names) {
    const TaskAtLength t = parse_task_at_length(name);
    const int64_t length = t.length > 0 ? model::scoring_length(shape, t.length, "task " + name)
                                        : model::scoring_length(shape, request.context, "--context");
    auto it = std::find_if(lengths.begin(), lengths.end(), [&](const auto& g) { return g.first == length; });
    if (it == lengths.end()) it = lengths.insert(lengths.end(), {length, {}});
    it->second.push_back(t.task);
    if (std::find(distinct.begin(), distinct.end(), t.task) == distinct.end()) distinct.push_back(t.task);
  }
  const std::vector<LoadedTask> loaded =
      request.limit >= 0 ? load_tasks(distinct, data_root, request.limit)
                         : load_tasks(distinct, data_root, eval.limit, eval.task_limits);
  std::vector<EvalGroup> plan;
  for (const auto& [length, tasks] : lengths) {
    EvalGroup group{DecoderLMAdapter(scored.model, length), {}};
    for (const std::string& task : tasks) {
      group.tasks.push_back(loaded[std::find(distinct.begin(), distinct.end(), task) - distinct.begin()]);
    }
    plan.push_back(std::move(group));
  }
  return plan;
}

bool run_evaluation(std::vector<EvalGroup>& plan, const TextEncoder& encode, const EvalOptions& options,
                    const TaskDone& done, const std::function<bool()>& stop) {
  for (EvalGroup& group : plan) {
    if (!evaluate_tasks(group.model, encode, group.tasks, options, done, stop)) return false;
  }
  return true;
}

}  // namespace attnbench::evals
