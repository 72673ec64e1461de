// The one stop policy (core/common/stop_signal.h), in forked children so that the signals reach
// no test runner: the first SIGINT or SIGTERM asks, a second of either kind ends the process by
// its default action, the handlers are restored when the scope ends, and a stop that reached a
// child is recorded as the first.
#include "core/common/stop_signal.h"

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <functional>

namespace {

// Runs `body` in a child process; its wait status.
int in_child(const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

}  // namespace

CATCH_TEST_CASE("the first stop signal asks, a second one of either kind ends the process") {
  const int status = in_child([] {
    attnbench::StopSignals signals;
    if (attnbench::stop_requested()) return 10;
    std::raise(SIGTERM);
    if (!attnbench::stop_requested() || attnbench::stop_signal() != SIGTERM) return 11;
    std::raise(SIGINT);  // the second: the default action ends the process here
    return 12;
  });
  CATCH_CHECK(WIFSIGNALED(status));
  CATCH_CHECK(WTERMSIG(status) == SIGINT);
}

CATCH_TEST_CASE("a stop recorded from a child process makes the next signal the second") {
  const int status = in_child([] {
    attnbench::StopSignals signals;
    attnbench::request_stop(SIGINT);
    if (attnbench::stop_signal() != SIGINT) return 10;
    std::raise(SIGTERM);
    return 11;
  });
  CATCH_CHECK(WIFSIGNALED(status));
  CATCH_CHECK(WTERMSIG(status) == SIGTERM);
}

CATCH_TEST_CASE("the handlers are restored when the scope ends, and the next scope starts afresh") {
  const int status = in_child([] {
    std::signal(SIGTERM, SIG_IGN);
    {
      attnbench::StopSignals signals;
      std::raise(SIGTERM);
      if (!attnbench::stop_requested()) return 10;
    }
    std::raise(SIGTERM);  // ignored again: the handler that was there before is back
    attnbench::StopSignals again;
    return attnbench::stop_requested() ? 11 : 0;
  });
  CATCH_CHECK(WIFEXITED(status));
  CATCH_CHECK(WEXITSTATUS(status) == 0);
}
