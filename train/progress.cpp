#include "train/progress.h"

#include <unistd.h>

#include <fmt/format.h>

#include "train/throughput.h"

namespace attnbench::train {

Progress::Progress(int64_t total_steps, int64_t log_interval, bool live, bool quiet,
                   double flops_per_token, double peak_flops)
    : total_(total_steps), interval_(log_interval > 0 ? log_interval : 1),
      flops_per_token_(flops_per_token), peak_flops_(peak_flops), live_(live), quiet_(quiet) {}

bool Progress::stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

std::string Progress::format_duration(double s) {
  if (!(s >= 0.0)) return "?";
  auto total = static_cast<int64_t>(s + 0.5);
  if (total < 60) return fmt::format("{}s", total);
  if (total < 3600) return fmt::format("{}m{:02d}s", total / 60, total % 60);
  return fmt::format("{}h{:02d}m", total / 3600, (total % 3600) / 60);
}

std::string Progress::line(int64_t step, double loss, double lr, int64_t tokens,
                           double peak_memory_mib) const {
  const double tps = ema_seconds_ > 0.0 ? static_cast<double>(tokens) / ema_seconds_ : 0.0;
  const std::string memory =
      peak_memory_mib >= 0.0 ? fmt::format(" | mem {:.0f} MiB", peak_memory_mib) : std::string();
  return fmt::format("step {}/{} | loss {:.4f} | lr {:.2e} | {:.0f} tok/s | {:.1f} ms/step | "
                     "MFU {}{} | ETA {}",
                     step, total_, loss, lr, tps, 1000.0 * ema_seconds_,
                     format_mfu(mfu(flops_per_token_, tps, peak_flops_)), memory,
                     format_duration(ema_seconds_ * static_cast<double>(total_ - step)));
}

void Progress::step(int64_t step, double loss, double lr, int64_t tokens, double seconds,
                    double peak_memory_mib) {
  // An exponential average over ~10 steps: steady against one slow step, quick to follow changes.
  ema_seconds_ = ema_seconds_ == 0.0 ? seconds : 0.9 * ema_seconds_ + 0.1 * seconds;
  if (quiet_) return;
  const bool last = step == total_;
  if (!live_ && step % interval_ != 0 && !last) return;
  const std::string line = this->line(step, loss, lr, tokens, peak_memory_mib);
  if (live_) {
    fmt::print(stderr, "\r\033[K{}", line);
    line_open_ = true;
  } else {
    fmt::print(stderr, "{}\n", line);
  }
  std::fflush(stderr);
}

void Progress::note(const std::string& text) {
  if (quiet_) return;
  if (line_open_) fmt::print(stderr, "\r\033[K");
  line_open_ = false;
  fmt::print(stderr, "{}\n", text);
  std::fflush(stderr);
}

void Progress::finish() {
  if (line_open_ && !quiet_) fmt::print(stderr, "\n");
  line_open_ = false;
}

}  // namespace attnbench::train
