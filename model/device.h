// Where a model runs and with which numerics (docs/training.md, "Devices and precision"): the one
// reading of train.device, precision, tf32 and deterministic that training, evaluation and the
// diagnostics share.
#pragma once
#include <torch/torch.h>

#include <string>

#include "core/config/run_config.h"

namespace attnbench::model {

// A device setting ("auto" | "cpu" | "cuda") resolved: cpu -> CPU; cuda -> cuda:0, or a UsageError
// naming `key` when no CUDA device is usable; auto -> cuda:0 when one is, else CPU.
torch::Device resolve_device(const std::string& setting, const std::string& key = "train.device");

// The GPU's name ("NVIDIA H100 80GB HBM3"); "" on CPU or in a build that cannot ask (no CUDA).
std::string gpu_name(const torch::Device& device);
// What the results store records as a run's device: "cpu", "cuda:0 (NVIDIA H100 80GB HBM3)"
// ("cuda:0" when the build cannot name the GPU).
std::string device_description(const torch::Device& device);

// UsageError unless train.precision can run on `device`: bf16 needs CUDA (CPU autocast is not
// supported here: slower than fp32 on most CPUs, and the CPU path stays fp32 only).
void check_precision(const config::TrainConfig& train, const torch::Device& device);

// Sets the process-wide switches of train.tf32 and train.deterministic to the config's values
// (false = LibTorch's defaults), so one run's switches never leak into the next run of a process.
void apply_numerics(const config::TrainConfig& train);

// `t` on `device`: `t` itself when it is already there (the CPU path gains no copy), else an
// asynchronous copy (a host buffer may be reused once this returns: copies from pageable memory are
// staged before the call returns).
inline torch::Tensor to_device(const torch::Tensor& t, const torch::Device& device) {
  return t.device() == device ? t : t.to(device, /*non_blocking=*/true);
}

}  // namespace attnbench::model
