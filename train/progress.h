// Training progress for people (docs/training.md, "Progress"): on a terminal one live line,
// rewritten every step; otherwise (logs, pipes, CI) a plain line every log_interval steps and at
// the last step. Both show step, loss, learning rate, tokens/s, time per step, MFU ("-" when the
// device's peak is unknown), peak memory and the estimated time left. Goes to stderr, so that
// stdout stays machine-readable.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace attnbench::train {

class Progress {
 public:
  // `live`: rewrite one line (stderr is a terminal); `quiet`: print nothing. `flops_per_token` and
  // `peak_flops` give the MFU (throughput.h; peak 0 = unknown, shown as "-").
  Progress(int64_t total_steps, int64_t log_interval, bool live, bool quiet,
           double flops_per_token = 0.0, double peak_flops = 0.0);

  // Called after optimizer step `step` (1-based count of steps done) that took `seconds` and
  // processed `tokens`; `peak_memory_mib` < 0 = unknown (not shown).
  void step(int64_t step, double loss, double lr, int64_t tokens, double seconds,
            double peak_memory_mib = -1.0);
  // The line step() prints, from the smoothed seconds per step.
  std::string line(int64_t step, double loss, double lr, int64_t tokens,
                   double peak_memory_mib) const;
  // A line of its own (validation loss, checkpoint, resume), kept above the live line.
  void note(const std::string& text);
  // Ends the live line.
  void finish();

  static bool stderr_is_terminal();
  static std::string format_duration(double seconds);  // "42s", "3m05s", "2h07m"

 private:
  int64_t total_, interval_;
  double flops_per_token_, peak_flops_;
  bool live_, quiet_, line_open_ = false;
  double ema_seconds_ = 0.0;  // smoothed seconds per step, for the ETA and tokens/s
};

}  // namespace attnbench::train
