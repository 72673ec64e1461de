// The per-item outcomes `results compare` tests over items (results/compare.h): each evaluation
// item's acc, acc_norm and gold log-likelihood for one run, rebuilt from its stored samples as
// lm-eval scores them, and the series of one measure over paired runs. Private to compare.cpp.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "results/sqlite.h"

namespace attnbench::results {

// The outcomes of one evaluation item (one doc of a task) for one run, from its samples.
struct ItemOutcome {
  std::optional<double> correct;       // 1 / 0: acc, the argmax choice is the gold one
  std::optional<double> correct_norm;  // 1 / 0: acc_norm, the argmax of ll / len(choice)
  std::optional<double> gold_ll;  // log-likelihood of the gold continuation (sum over its requests)
};
using Items = std::map<int64_t, ItemOutcome>;  // doc -> outcome

// Every item of `task` that run `run` has samples of (empty when it has none).
Items load_items(Db& db, const std::string& run, const std::string& task);

// Per-item values of one measure over every pair: items present in all of them, each side's value
// averaged over the pairs. McNemar's counts pool the (pair, item) units.
struct ItemSeries {
  std::vector<double> variant, baseline;
  int64_t only_variant = 0, only_baseline = 0;
};

ItemSeries item_series(const std::vector<std::pair<Items, Items>>& loaded,
                       std::optional<double> ItemOutcome::*measure);

}  // namespace attnbench::results
