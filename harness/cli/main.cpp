// attnbench: the command-line entry point. Every error is caught here, once, printed to stderr:
// exit 2 for usage and configuration errors, 1 for runtime failures (docs/ARCHITECTURE.md).
#include <torch/torch.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <new>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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

// A message without the C++ backtrace LibTorch appends ("Exception raised from ... frame #0 ..."),
// also where another exception quoted a c10::Error's what().
std::string without_backtrace(std::string message) {
  if (auto at = message.find("Exception raised from "); at != std::string::npos) message.resize(at);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return message;
}

// nlohmann's "[json.exception.type_error.302] type must be ..." without the bracketed id.
std::string json_message(const nlohmann::json::exception& e) {
  std::string what = e.what();
  if (auto end = what.find("] "); what.rfind("[json.exception.", 0) == 0 && end != std::string::npos) {
    what = what.substr(end + 2);
  }
  return what;
}

// A path the user gave that cannot be used (missing, not permitted, of the wrong kind) is bad
// input; anything else the filesystem refuses (a full disk, an I/O error) is a runtime failure.
int filesystem_exit_code(const std::filesystem::filesystem_error& e) {
  const auto c = e.code();
  const bool user_path = c == std::errc::no_such_file_or_directory ||
                         c == std::errc::permission_denied || c == std::errc::not_a_directory ||
                         c == std::errc::is_a_directory || c == std::errc::file_exists ||
                         c == std::errc::read_only_file_system ||
                         c == std::errc::filename_too_long ||
                         c == std::errc::too_many_symbolic_link_levels;
  return user_path ? 2 : 1;
}

// Every error reaches the terminal through here: "error: " and the message, its control
// characters escaped (a config key or path may hold an escape sequence).
void print_error(const std::string& message) {
  fmt::print(stderr, "error: {}\n", terminal_safe(message));
}

// A filesystem error as "<path>: <what the system said>" and, for the causes a user can fix, why,
// instead of libstdc++'s "filesystem error: status: ... [path]".
std::string restated(const std::filesystem::filesystem_error& e) {
  std::string what = e.code().message();
  if (e.code() == std::errc::too_many_symbolic_link_levels) {
    what += " (a symbolic link loop, or links nested too deep)";
  } else if (e.code() == std::errc::filename_too_long) {
    what += " (a name over 255 bytes, or a path over 4096)";
  }
  return e.path1().empty() ? what : e.path1().string() + ": " + what;
}

// Runs the chosen command. Errors are printed once: our own with their message (they carry their
// context); a library's (LibTorch, nlohmann::json, the allocator, the filesystem) restated with
// the command it interrupted and never with a stack trace (docs/ARCHITECTURE.md, "Rules").
int run_guarded(const std::string& command, const Action& action) {
  try {
    return action();
  } catch (const UsageError& e) {
    print_error(without_backtrace(e.what()));
    return 2;
  } catch (const c10::Error& e) {
    print_error(command + ": LibTorch: " + without_backtrace(e.what_without_backtrace()));
    return 1;
  } catch (const nlohmann::json::exception& e) {
    print_error(command + ": malformed JSON input (a file it read is not in the expected layout): " +
                json_message(e));
    return 2;
  } catch (const std::bad_alloc&) {
    print_error(command + ": out of memory (lower the model, batch or context sizes; "
                          "docs/training.md, \"Validation\")");
    return 1;
  } catch (const std::filesystem::filesystem_error& e) {
    print_error(command + ": " + restated(e));
    return filesystem_exit_code(e);
  } catch (const std::exception& e) {
    print_error(without_backtrace(e.what()));
    return 1;
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
    std::ostringstream err;  // an option's value is quoted in the message: escaped like any error
    int code = app.exit(e, std::cout, err);  // prints help, or the error into `err`
    std::cerr << terminal_safe(err.str());
    return code == 0 ? 0 : 2;
  }
  if (version) return run_guarded("attnbench --version", [] {
    print_version();
    return 0;
  });
  // The deepest parsed command runs; a group parsed without a subcommand prints its help.
  CLI::App* chosen = &app;
  std::string command = "attnbench";
  while (!chosen->get_subcommands().empty()) {
    chosen = chosen->get_subcommands().front();
    command += " " + chosen->get_name();
  }
  if (auto it = actions.find(chosen); it != actions.end()) return run_guarded(command, it->second);
  std::cout << chosen->help();
  return 2;
}

}  // namespace attnbench::cli

int main(int argc, char** argv) { return attnbench::cli::main(argc, argv); }
