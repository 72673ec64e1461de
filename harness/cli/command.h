// Subcommands register themselves (one file each under harness/cli), git/cargo style:
//   static RegisterCommand reg("train", "Train one model", [](CLI::App& app) {
//     auto opts = std::make_shared<Options>();
//     app.add_option("--config", opts->config)->required();
//     return [opts] { return run_train(*opts); };   // the action, run when chosen
//   });
// Actions return the exit code; errors are thrown (UsageError -> 2, anything else -> 1) and printed
// once by main.
#pragma once
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace attnbench::cli {

using Action = std::function<int()>;
using CommandSetup = std::function<Action(CLI::App& subcommand)>;

struct RegisterCommand {
  RegisterCommand(std::string name, std::string description, CommandSetup setup);
  // A subcommand of another command, e.g. ("data", "fetch", ...) for `attnbench data fetch`. A
  // parent whose setup returns an empty Action only groups its subcommands.
  RegisterCommand(std::string parent, std::string name, std::string description, CommandSetup setup);
};

}  // namespace attnbench::cli
