#include "harness/sweep/interrupt.h"

#include <atomic>
#include <csignal>

namespace attnbench::sweep {
namespace {

std::atomic<int> g_signal{0};

extern "C" void on_stop_signal(int sig) {
  g_signal = sig;
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C kills
  std::signal(SIGTERM, SIG_DFL);
}

}  // namespace

void install_interrupt_handler() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
}

void mark_interrupted(int sig) { on_stop_signal(sig); }

bool interrupted() { return g_signal.load() != 0; }

int interrupt_signal() { return g_signal.load(); }

}  // namespace attnbench::sweep
