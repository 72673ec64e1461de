#include "core/common/stop_signal.h"

#include <atomic>
#include <csignal>

namespace attnbench {
namespace {

std::atomic<int> g_signal{0};  // the first stop signal; 0 = none
std::atomic<int> g_depth{0};   // live StopSignals objects
static_assert(std::atomic<int>::is_always_lock_free,
              "the signal handler may only touch lock-free atomics");

extern "C" void on_stop_signal(int sig) {
  int none = 0;
  if (g_signal.compare_exchange_strong(none, sig)) return;  // the first: asks
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

StopSignals::StopSignals() {
  if (g_depth.fetch_add(1) == 0) g_signal.store(0);
  previous_int_ = std::signal(SIGINT, on_stop_signal);
  previous_term_ = std::signal(SIGTERM, on_stop_signal);
}

StopSignals::~StopSignals() {
  std::signal(SIGINT, previous_int_);
  std::signal(SIGTERM, previous_term_);
  g_depth.fetch_sub(1);
}

bool stop_requested() { return g_signal.load() != 0; }

int stop_signal() { return g_signal.load(); }

void request_stop(int sig) {
  int none = 0;
  g_signal.compare_exchange_strong(none, sig);
}

}  // namespace attnbench
