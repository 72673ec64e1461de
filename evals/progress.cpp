#include "evals/progress.h"

#include <unistd.h>

#include <cmath>

#include <fmt/format.h>

namespace attnbench::evals {

bool is_terminal(std::FILE* f) { return f && isatty(fileno(f)) == 1; }

ProgressBar::ProgressBar(std::FILE* out, bool live, double interval_s)
    : out_(out), live_(live), interval_s_(interval_s) {}

namespace {
std::string duration(double s) {
  if (!std::isfinite(s)) return "?";
  auto total = static_cast<int64_t>(std::llround(s));
  if (total >= 3600) return fmt::format("{}h{:02}m", total / 3600, total % 3600 / 60);
  if (total >= 60) return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}s", total);
}
}  // namespace

std::string ProgressBar::format(const std::string& label, int64_t done, int64_t total,
                                int64_t items, double elapsed_s) {
  const double rate = elapsed_s > 0 ? static_cast<double>(done) / elapsed_s : 0.0;
  const double eta = rate > 0 ? static_cast<double>(total - done) / rate : NAN;
  const double items_per_request = total > 0 ? static_cast<double>(items) / total : 1.0;
  const std::string counts = items == total
                                 ? fmt::format("{}/{} items", done, total)
                                 : fmt::format("{}/{} requests ({} items)", done, total, items);
  return fmt::format("{} {} {:.1f} items/s ETA {}", label, counts, rate * items_per_request,
                     done >= total ? "0s" : duration(eta));
}

void ProgressBar::start(const std::string& label, int64_t total, int64_t items) {
  label_ = label;
  total_ = total;
  items_ = items;
  done_ = 0;
  start_ = last_print_ = std::chrono::steady_clock::now();
}

void ProgressBar::advance(int64_t requests) {
  done_ += requests;
  if (!out_) return;
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_print_).count();
  if (since >= (live_ ? 0.1 : interval_s_)) print(false);
}

void ProgressBar::finish() {
  if (out_) print(true);
}

void ProgressBar::print(bool final) {
  const auto now = std::chrono::steady_clock::now();
  last_print_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  std::string line = format(label_, done_, total_, items_, elapsed);
  if (live_) {
    fmt::print(out_, "\r\033[K{}{}", line, final ? "\n" : "");
  } else {
    fmt::print(out_, "{}\n", line);
  }
  std::fflush(out_);
}

}  // namespace attnbench::evals
