// Subcommands register themselves (one file each under harness/cli), git/cargo style:
//   static RegisterCommand reg("train", "Train one model", [](CLI::App& app) {
//     auto opts = std::make_shared<Options>();
//     app.add_option("--config", opts->config)->required();
//     return [opts] { return run_train(*opts); };   // the action, run when chosen
//   });
// Actions return the exit code; errors are thrown (UsageError -> 2, anything else -> 1) and printed
// once by main. Every command ends its setup with refuse_empty_values(app) and checks its numbers
// with int_in / finite_in (declared here, beside the registration, so that torch-free commands stay
// torch-free: cmake/Libraries.cmake).
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
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

// Checks of command-line values (option_checks.cpp), run by CLI11 while it parses, before the
// command starts: a bad value exits 2 with a message naming the option.

// Refuses "" for every option of `app` that takes a value (flags take none), positionals included:
// an unset shell variable is not a request for the default. Called once the options are added.
void refuse_empty_values(CLI::App& app);

// A whole number in [lo, hi], written in full ("12"; not "12abc", "1e3", "" or "9e99").
CLI::Validator int_in(int64_t lo, int64_t hi = std::numeric_limits<int64_t>::max());

// A finite number in [lo, hi] ("nan", "inf" and "1e309" refused).
CLI::Validator finite_in(double lo, double hi);

// `threads`, or the machine's core count when it asks for more (with a warning naming `what`):
// more threads than cores only slow work down, and a huge count takes minutes to start.
int cap_to_cores(int threads, const std::string& what);

}  // namespace attnbench::cli
