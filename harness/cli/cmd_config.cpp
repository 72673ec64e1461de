// `attnbench config`: the resolved run config as canonical JSON with its run id, or the schema of
// every key. Validates exactly like `train`, so it doubles as a config checker.
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/config/fields.h"
#include "core/config/run_config.h"
#include "harness/cli/command.h"

namespace attnbench::cli::cmd_config {
namespace {

struct Options {
  std::string config;
  std::vector<std::string> sets;
  bool schema = false;
};

int run(const Options& o) {
  if (o.schema) {
    std::string section;
    for (auto& f : config::fields()) {
      if (f.section != section) fmt::print("{}[{}]\n", section.empty() ? "" : "\n", section = f.section);
      fmt::print("  {:<22} {:<7} {}\n", f.name, config::type_name(f.type), f.doc);
    }
    fmt::print("  {:<22} {:<7} {}\n", "tasks", "[string]", "tasks to evaluate (attnbench eval)");
    fmt::print("  {:<22} {:<7} {}\n", "task_limits", "{task=int}",
               "per-task limits replacing limit, e.g. { wikitext = 5 }");
    fmt::print("  {:<22} {:<7} {}\n", "contexts", "[int]",
               "further lengths to score every task at (length extrapolation), stored as task@N");
    fmt::print("\n[attention]\n  variant and backend, then the variant's parameters: see "
               "`attnbench variants`\n");
    return 0;
  }
  config::RunConfig cfg = o.config.empty() ? config::parse_run_config("", "(defaults)", o.sets)
                                           : config::load_run_config(o.config, o.sets);
  nlohmann::json j = {{"run_id", config::config_hash(cfg)}, {"config", config::to_json(cfg)}};
  std::cout << j.dump(2) << "\n";
  return 0;
}

RegisterCommand reg("config", "Validate a run config and print it resolved, with its run id",
                    [](CLI::App& app) {
                      auto o = std::make_shared<Options>();
                      app.add_option("--config,-c", o->config, "TOML run config (default: all defaults)");
                      app.add_option("--set", o->sets, "override, e.g. --set train.lr=1e-3")
                          ->expected(1)
                          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
                      app.add_flag("--schema", o->schema, "list every key with its type and meaning");
                      refuse_empty_values(app);
                      return [o] { return run(*o); };
                    });

}  // namespace
}  // namespace attnbench::cli::cmd_config
