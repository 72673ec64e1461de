// attnbench: the command-line entry point. Every error is caught here, once, printed to stderr:
// exit 2 for usage and configuration errors, 1 for runtime failures (docs/ARCHITECTURE.md).
#include <torch/torch.h>

#include <iostream>
#include <map>

#include <fmt/format.h>

#include "core/common/error.h"
#include "core/common/registry.h"
#include "harness/cli/command.h"
#include "harness/cli/runtime.h"

namespace attnbench::cli {
namespace {

struct CommandEntry {
  std::string parent, name, description;
  CommandSetup setup;
};

// Keyed by the command's full path ("data", "data fetch"): name order puts every group before its
// subcommands.
Registry<CommandEntry>& commands() {
  static Registry<CommandEntry> all("command");
  return all;
}

void print_version() {
  int threads = init_threads();
  std::string blas = loaded_blas();
  fmt::print("attnbench {}\n", ATTNBENCH_VERSION);
  fmt::print("libtorch {}\n", TORCH_VERSION);
  fmt::print("blas {}\n", blas.empty() ? "(none loaded)" : blas);
  fmt::print("threads {}\n", threads);
  if (is_reference_blas(blas)) {
    fmt::print(stderr,
               "warning: LibTorch is running on the reference BLAS ({}), about 100x slower than "
               "OpenBLAS. Install libopenblas0-openmp (scripts/setup).\n",
               blas.empty() ? "none found" : blas);
  }
}

}  // namespace

RegisterCommand::RegisterCommand(std::string name, std::string description, CommandSetup setup)
    : RegisterCommand("", std::move(name), std::move(description), std::move(setup)) {}

RegisterCommand::RegisterCommand(std::string parent, std::string name, std::string description,
                                 CommandSetup setup) {
  const std::string path = parent.empty() ? name : parent + " " + name;
  commands().add(path, {std::move(parent), std::move(name), std::move(description), std::move(setup)});
}

int main(int argc, char** argv) {
  // Two files registering one name (a variant, task, format, command ...) is a build mistake that
  // would silently drop one of them: refuse to start.
  for (const std::string& e : registration_errors()) fmt::print(stderr, "error: {}\n", e);
  if (!registration_errors().empty()) return 1;

  CLI::App app{"attnbench: attention-variant ablations for decoder language models"};
  app.require_subcommand(0, 1);
  bool version = false;
  app.add_flag("--version", version, "Print the version, the BLAS library loaded and the threads");

  std::map<CLI::App*, Action> actions;
  for (const auto& [path, c] : commands().items()) {  // groups before their subcommands
    CLI::App* parent = &app;
    if (!c.parent.empty()) {  // a group nobody registered explicitly is created on first use
      try {
        parent = app.get_subcommand(c.parent);
      } catch (const CLI::OptionNotFound&) {  // CLI11 2.1 has no get_subcommand_no_throw
        parent = app.add_subcommand(c.parent, c.parent + " commands");
      }
    }
    CLI::App* sub = parent->add_subcommand(c.name, c.description);
    if (Action a = c.setup(*sub)) actions[sub] = std::move(a);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);  // prints help or the error
    return code == 0 ? 0 : 2;
  }
  try {
    if (version) {
      print_version();
      return 0;
    }
    // The deepest parsed command runs; a group parsed without a subcommand prints its help.
    CLI::App* chosen = &app;
    while (!chosen->get_subcommands().empty()) chosen = chosen->get_subcommands().front();
    if (auto it = actions.find(chosen); it != actions.end()) return it->second();
    std::cout << chosen->help();
    return 2;
  } catch (const UsageError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}

}  // namespace attnbench::cli

int main(int argc, char** argv) { return attnbench::cli::main(argc, argv); }
