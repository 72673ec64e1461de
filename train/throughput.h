// Throughput figures that can be compared across machines (docs/training.md, "Throughput"): model
// FLOPs per token, the device's peak, MFU and peak memory. Pure arithmetic apart from
// peak_memory_mib, so that the CPU tests check the formulas the GPU runs report.
#pragma once
#include <torch/torch.h>

#include <string>

#include "core/config/run_config.h"

namespace attnbench::train {

// Model FLOPs of one trained token, forward and backward (the PaLM / nanoGPT estimate):
//   6 * N + 12 * n_layer * d_model * T
// N = the closed-form parameter count (model/param_count.h) less the token embedding when it is not
// tied to the LM head (a lookup multiplies nothing); 12 L C T counts QK^T and AV over the whole
// window, as if attention were not causal, like the estimate it follows.
double flops_per_token(const config::RunConfig& cfg);

// The dense bf16 peak FLOP/s of a GPU by name (a substring match on the name LibTorch reports:
// H100 SXM 989e12, H100 PCIe 756e12, H200 989e12, ...); 0 when the name is not in the table.
double gpu_peak_flops(const std::string& gpu_name);

// train.peak_flops when > 0, else gpu_peak_flops(gpu_name) ("" on the CPU: 0, no MFU).
double peak_flops(const config::TrainConfig& train, const std::string& gpu_name);

// Model FLOPs utilisation, achieved / peak: flops_per_token * tokens_per_s / peak. NaN when the
// peak is unknown (<= 0).
double mfu(double flops_per_token, double tokens_per_s, double peak);

// "41.2%", or "-" for NaN (an unknown peak).
std::string format_mfu(double mfu);

// The peak memory of the run so far, in MiB: on CUDA the most the caching allocator has handed to
// tensors on `device` (torch.cuda.max_memory_allocated; -1 in a build without CUDA), on the CPU
// the process's peak resident set (getrusage), which includes everything else in the process.
double peak_memory_mib(const torch::Device& device);

}  // namespace attnbench::train
