// The nine zero-shot tasks of the accuracy tables of Lazy Attention ("Attention Needs to Focus",
// arXiv 2601.00919), in the order the tables list them: the task group `paper`, and the tasks
// whose accuracies a results table averages into Avg (the paper's Avg is over these nine).
#pragma once
#include <algorithm>
#include <string>
#include <vector>

namespace attnbench {

inline const std::vector<std::string>& paper_tasks() {
  static const std::vector<std::string> nine = {"piqa",     "hellaswag",     "winogrande",
                                                "arc_easy", "arc_challenge", "boolq",
                                                "sciq",     "copa",          "openbookqa"};
  return nine;
}

inline bool is_paper_task(const std::string& task) {
  const auto& nine = paper_tasks();
  return std::find(nine.begin(), nine.end(), task) != nine.end();
}

}  // namespace attnbench
