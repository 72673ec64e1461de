// The learning-rate schedule (docs/training.md, "What a step does"): linear warmup from lr/warmup
// to lr over `warmup_steps`, then cosine decay to lr * min_lr_ratio at the last step.
#pragma once
#include <cstdint>

#include "core/config/run_config.h"

namespace attnbench::train {

// The rate for optimizer step `step` (0-based):
//   step < W:  lr * (step + 1) / W
//   else:      lr_min + (lr - lr_min) * (1 + cos(pi * (step - W) / max(1, S - 1 - W))) / 2
// with W = warmup_steps, S = steps, lr_min = lr * min_lr_ratio; the last step runs at lr_min.
double learning_rate(const config::TrainConfig& train, int64_t step);

}  // namespace attnbench::train
