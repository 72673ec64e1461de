#include "train/schedule.h"

#include <algorithm>
#include <cmath>

namespace attnbench::train {

double learning_rate(const config::TrainConfig& t, int64_t step) {
  if (step < t.warmup_steps) {
    return t.lr * static_cast<double>(step + 1) / static_cast<double>(t.warmup_steps);
  }
  const double lr_min = t.lr * t.min_lr_ratio;
  const int64_t span = std::max<int64_t>(1, t.steps - 1 - t.warmup_steps);
  const double progress = std::min(1.0, static_cast<double>(step - t.warmup_steps) / span);
  return lr_min + (t.lr - lr_min) * 0.5 * (1.0 + std::cos(M_PI * progress));
}

}  // namespace attnbench::train
