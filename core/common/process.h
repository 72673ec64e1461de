// Child processes (the sweep's --jobs cells, training's local ranks): a command and its
// environment built before fork(), since only async-signal-safe calls may run between fork() and
// exec(); and how a child ended, in words.
#pragma once
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace attnbench {

struct ChildCommand {
  std::vector<std::string> args;  // args[0]: the executable's path
  std::vector<std::string> env;   // "NAME=value"
  std::filesystem::path log;      // stdout and stderr appended here; empty = inherited
};

// This process's environment without the variables in `names`.
std::vector<std::string> environment_without(const std::vector<std::string>& names);

// Starts `cmd` in its own process group (a terminal's Ctrl-C reaches only the parent, which
// forwards it) and with SIGKILL as its parent-death signal (a child never runs on unsupervised
// after its parent is killed). Throws runtime_error when the log cannot be opened or fork fails.
pid_t spawn(const ChildCommand& cmd);

// The shell's convention for a wait() status: the exit code, or 128 + the signal.
int exit_code(int wait_status);

// "exited with status 1", "was killed by signal 9 (SIGKILL)".
std::string describe_exit(int wait_status);

}  // namespace attnbench
