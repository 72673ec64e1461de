// The report's first section, "what was trained": the model, the training budget, the evaluation
// and where the runs were made, read from the runs' stored configs and metadata, so that a page
// says what its numbers come from before it shows them.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "results/report/page.h"
#include "results/sqlite.h"

namespace attnbench::results {

namespace {

// "value" when every run agrees, else "a (3 runs), b (2 runs)"; kMissing when none has it.
std::string summarise(Stmt& s) {
  std::vector<std::pair<std::string, int64_t>> values;
  while (s.step()) values.emplace_back(s.is_null(0) || s.text(0).empty() ? "unknown" : s.text(0), s.integer(1));
  if (values.empty()) return kMissing;
  if (values.size() == 1) return values[0].first;
  std::vector<std::string> parts;
  for (const auto& [v, n] : values) parts.push_back(fmt::format("{} ({} run{})", v, n, n == 1 ? "" : "s"));
  return join(parts, ", ");
}

// The page's runs, as a condition on `column`; its one parameter is member_ids(page).
std::string members(const std::string& column) { return column + " IN (SELECT value FROM json_each(?))"; }

std::string member_ids(const ReportPage& page) {
  nlohmann::json ids = nlohmann::json::array();
  for (const SweepMember& m : page.members) ids.push_back(m.id);
  return ids.dump();
}

std::string param(const ReportPage& page, const std::string& key) {
  Stmt s = page.db.prepare("SELECT value, count(*) FROM params WHERE key = ? AND " + members("run") +
                           " GROUP BY value ORDER BY count(*) DESC, value");
  s.bind_all(key, member_ids(page));
  return summarise(s);
}

// A column of the runs table (a fixed name of ours, never user input).
std::string run_column(const ReportPage& page, const char* column) {
  Stmt s = page.db.prepare(std::string("SELECT ") + column + ", count(*) FROM runs WHERE " +
                           members("id") + " GROUP BY 1 ORDER BY count(*) DESC, 1");
  s.bind(1, member_ids(page));
  return summarise(s);
}

// Every scored task with its item counts: "piqa 200, wikitext 2".
std::string evaluation(const ReportPage& page) {
  Stmt s = page.db.prepare("SELECT task || ' ' || group_concat(DISTINCT n) FROM evals WHERE " +
                           members("run") + " GROUP BY task ORDER BY min(rowid)");
  s.bind(1, member_ids(page));
  std::vector<std::string> tasks;
  while (s.step()) tasks.push_back(s.text(0));
  return tasks.empty() ? std::string(kMissing) : join(tasks, ", ");
}

// A step's batch: train.batch_tokens when set, else batch_size sequences of the context.
std::string batch(const ReportPage& page) {
  const std::string tokens = param(page, "train.batch_tokens");
  if (tokens != "0") return tokens + " tokens";
  return param(page, "train.batch_size") + " sequences";
}

std::string render(const ReportPage& page) {
  const std::vector<std::pair<std::string, std::string>> facts = {
      {"runs", fmt::format("{} {}, {} row{} in the table", page.members.size(),
                                    page.options.runs.empty() ? "in the sweep" : "named", page.table.rows.size(),
                                    page.table.rows.size() == 1 ? "" : "s")},
      {"model", fmt::format("{} preset: {} layers, d_model {}, {} heads, context {} tokens",
                            param(page, "model.preset"), param(page, "model.n_layer"),
                            param(page, "model.d_model"), param(page, "model.n_head"),
                            param(page, "model.context_length"))},
      {"attention", param(page, "attention.variant")},
      {"training", fmt::format("{} steps of {}, lr {}, {}; seeds {}", param(page, "train.steps"),
                               batch(page), param(page, "train.lr"), param(page, "train.precision"),
                               param(page, "train.seed"))},
      {"data", param(page, "data.train")},
      {"evaluation (items scored)", evaluation(page)},
      {"code", fmt::format("attnbench {} at commit {}, LibTorch {}", run_column(page, "attnbench_version"),
                           run_column(page, "git_revision"), run_column(page, "torch_version"))},
      {"machine", fmt::format("{}: {}, {} threads", run_column(page, "host"), run_column(page, "device"),
                              run_column(page, "threads"))},
  };
  std::string h = "<section id=\"overview\">\n<h2>What was trained</h2>\n<table class=\"facts\">\n";
  for (const auto& [what, value] : facts) h += "<tr><th>" + esc(what) + "</th><td>" + esc(value) + "</td></tr>\n";
  return h + "</table>\n</section>\n";
}

ReportSection section() {
  ReportSection s;
  s.id = "overview";
  s.nav = "what was trained";
  s.order = 5;
  s.render = render;
  return s;
}

const RegisterReportSection kRegistered(section());

}  // namespace

}  // namespace attnbench::results
