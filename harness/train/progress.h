// Training progress for people (docs/training.md, "Progress"): on a terminal one live line,
// rewritten every step; otherwise (logs, pipes, CI) a plain line every log_interval steps and at
// the last step. Both show step, loss, learning rate, tokens/s and the estimated time left. Goes to
// stderr, so that stdout stays machine-readable.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace attnbench::train {

class Progress {
 public:
  // `live`: rewrite one line (stderr is a terminal); `quiet`: print nothing.
  Progress(int64_t total_steps, int64_t log_interval, bool live, bool quiet);

  // Called after optimizer step `step` (1-based count of steps done) that took `seconds` and
  // processed `tokens`.
  void step(int64_t step, double loss, double lr, int64_t tokens, double seconds);
  // A line of its own (validation loss, checkpoint, resume), kept above the live line.
  void note(const std::string& text);
  // Ends the live line.
  void finish();

  static bool stderr_is_terminal();
  static std::string format_duration(double seconds);  // "42s", "3m05s", "2h07m"

 private:
  int64_t total_, interval_;
  bool live_, quiet_, line_open_ = false;
  double ema_seconds_ = 0.0;  // smoothed seconds per step, for the ETA and tokens/s
};

}  // namespace attnbench::train
