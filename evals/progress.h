// A progress line for long evaluations: items done, items/s and ETA. On a terminal it redraws one
// live line (at most 10 times a second); otherwise it prints a plain line every `interval_s`.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace attnbench::evals {

class ProgressBar {
 public:
  // `out` nullptr = silent. `live` = redraw in place (pass isatty(fileno(out))).
  ProgressBar(std::FILE* out, bool live, double interval_s = 30.0);
  void start(const std::string& label, int64_t total);
  void advance(int64_t items);
  void finish();
  // "label 120/5153 items 35.2 items/s ETA 2m23s" for the given state (the printed line).
  static std::string format(const std::string& label, int64_t done, int64_t total,
                            double elapsed_s);

 private:
  std::FILE* out_;
  bool live_;
  double interval_s_;
  std::string label_;
  int64_t total_ = 0, done_ = 0;
  std::chrono::steady_clock::time_point start_, last_print_;
  void print(bool final);
};

// Whether `f` is a terminal (progress bars redraw in place there).
bool is_terminal(std::FILE* f);

}  // namespace attnbench::evals
