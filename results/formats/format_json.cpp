// `results table --format json`: the whole table with raw stored values (accuracies as fractions);
// a missing cell is null, never 0. With --baseline, each cell's test against the baseline row.
#include <nlohmann/json.hpp>

#include "results/table.h"

namespace attnbench::results {

namespace {
nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

nlohmann::json baseline_json(const Cell& c) {
  if (!c.vs_baseline) return nullptr;
  const BaselineTest& b = *c.vs_baseline;
  return {{"mark", baseline_standing(c)},
          {"p", b.p}, {"test", b.test}, {"measure", b.measure}, {"n", b.n}, {"diff", b.diff}};
}

std::string render_json(const ResultTable& t) {
  nlohmann::json j;
  j["sweep"] = t.sweep;
  if (!t.runs.empty()) j["runs"] = t.runs;
  j["metric"] = t.metric_choice;
  j["row_keys"] = t.row_keys;
  j["baseline"] = nullptr;
  if (t.baseline) {
    j["baseline"] = {{"selector", t.baseline->selector}, {"row", t.baseline->row},
                     {"alpha", kBaselineAlpha}, {"resamples", t.baseline->resamples},
                     {"seed", t.baseline->seed}};
  }
  j["columns"] = nlohmann::json::array();
  for (const Column& c : t.columns) {
    j["columns"].push_back({{"task", c.task},
                            {"metric", c.metric},
                            {"lower_is_better", c.lower_is_better},
                            {"accuracy", c.accuracy},
                            {"in_average", c.in_average}});
  }
  j["rows"] = nlohmann::json::array();
  for (const Row& r : t.rows) {
    nlohmann::json row;
    row["keys"] = nlohmann::json::object();
    for (size_t i = 0; i < r.keys.size(); ++i) {
      row["keys"][t.row_keys[i]] = r.keys[i].empty() ? nlohmann::json() : nlohmann::json(r.keys[i]);
    }
    row["n"] = r.n;
    row["baseline"] = r.baseline;
    row["runs"] = r.runs;
    row["cells"] = nlohmann::json::array();
    for (const Cell& c : r.cells) {
      if (c.n == 0) {
        row["cells"].push_back(nullptr);
        continue;
      }
      row["cells"].push_back({{"mean", c.mean},
                              {"std", opt(c.std)},
                              {"n", c.n},
                              {"stderr", opt(c.std_error)},
                              {"best", c.best},
                              {"within_stderr_of_best", c.within_std_error},
                              {"other_scoring", c.other_scoring},
                              {"vs_baseline", baseline_json(c)}});
    }
    if (r.avg) {
      row["avg"] = {{"mean", r.avg->mean},
                    {"std", opt(r.avg->std)},
                    {"tasks_present", r.avg->tasks_present},
                    {"tasks_total", r.avg->tasks_total},
                    {"complete", r.avg->complete()}};
    } else {
      row["avg"] = nullptr;
    }
    row["note"] = r.note;
    j["rows"].push_back(std::move(row));
  }
  j["notes"] = table_legend(t);
  return j.dump(2) + "\n";
}

const RegisterTableFormat kJson({"json", "every number, raw, with the row's runs", render_json});

}  // namespace

}  // namespace attnbench::results
