// attnbench: the command-line entry point. Every error is caught here, once, printed to stderr:
// exit 2 for usage and configuration errors, 1 for runtime failures (DESIGN.md, command line).
#include <torch/torch.h>

#include <iostream>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "harness/cli/command.h"
#include "harness/cli/runtime.h"
#include "harness/common/error.h"

namespace attnbench::cli {
namespace {

struct CommandEntry {
  std::string name, description;
  CommandSetup setup;
};

std::vector<CommandEntry>& commands() {
  static std::vector<CommandEntry> all;
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

RegisterCommand::RegisterCommand(std::string name, std::string description, CommandSetup setup) {
  commands().push_back({std::move(name), std::move(description), std::move(setup)});
}

int main(int argc, char** argv) {
  CLI::App app{"attnbench: attention-variant ablations for decoder language models"};
  app.require_subcommand(0, 1);
  bool version = false;
  app.add_flag("--version", version, "Print the version, the BLAS library loaded and the threads");

  std::map<CLI::App*, Action> actions;
  for (auto& c : commands()) {
    CLI::App* sub = app.add_subcommand(c.name, c.description);
    actions[sub] = c.setup(*sub);
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
    for (auto& [sub, action] : actions) {
      if (sub->parsed()) return action();
    }
    std::cout << app.help();
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
