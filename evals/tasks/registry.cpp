// The task registry: every evals/tasks/<task>.cpp registers one TaskSpec at static initialisation
// (the library is linked whole so no registration is dropped; core/common/registry.h).
#include <algorithm>

#include "core/common/error.h"
#include "core/common/paper_tasks.h"
#include "core/common/registry.h"
#include "evals/tasks/task.h"

namespace attnbench::evals {

namespace {
Registry<TaskSpec>& registry() {
  static Registry<TaskSpec> tasks("task");  // function-local: safe from init-order issues
  return tasks;
}

std::string trim(const std::string& s) {
  const char* ws = " \t\n\r";
  const auto b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}
}  // namespace

RegisterTask::RegisterTask(TaskSpec spec) {
  const std::string name = spec.name;
  const DataSource& s = spec.source;
  if (s.folder.empty() || s.dataset.empty() || s.config.empty() || s.split.empty() || !spec.load) {
    // Recorded, as a duplicate is: main() refuses to start (core/common/registry.h).
    detail::registration_error_list().push_back("task '" + name + "' is registered without its data " +
                                        "source (folder, dataset, config, split) or loader");
  }
  registry().add(name, std::move(spec));
}

const TaskSpec& find_task(const std::string& name) {
  if (const TaskSpec* spec = registry().find(name)) return *spec;
  throw UsageError(registry().unknown(name) + "; or the groups 'all', 'paper'");
}

std::vector<std::string> task_names() { return registry().names(); }

std::vector<std::string> expand_task_list(const std::string& spec) {
  std::vector<std::string> out;
  auto add = [&](const std::string& name) {
    find_task(name);  // validates, with a did-you-mean
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  };
  size_t start = 0;
  while (true) {
    const size_t comma = spec.find(',', start);
    const std::string item = trim(spec.substr(start, comma == std::string::npos ? std::string::npos
                                                                                : comma - start));
    if (item.empty()) {
      throw UsageError("empty task name in task list '" + spec +
                       "' (expected 'all', 'paper' or comma-separated names)");
    }
    if (item == "all") {
      for (const auto& n : task_names()) add(n);
    } else if (item == "paper") {
      for (const auto& n : paper_tasks()) add(n);
    } else {
      add(item);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace attnbench::evals
