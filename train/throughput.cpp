#include "train/throughput.h"

#include <sys/resource.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kernels/torch_compat.h"
#include "model/param_count.h"

namespace attnbench::train {

double flops_per_token(const config::RunConfig& cfg) {
  const auto& m = cfg.model;
  double n = static_cast<double>(model::closed_form_parameter_count(m, cfg.attention));
  if (!m.tie_embeddings) n -= static_cast<double>(m.padded_vocab() * m.d_model);
  return 6.0 * n + 12.0 * static_cast<double>(m.n_layer * m.d_model * m.context_length);
}

double gpu_peak_flops(const std::string& gpu_name) {
  // Dense (no sparsity) bf16 tensor-core peaks from the vendors' data sheets. Checked in order:
  // the PCIe H100 before the H100 in general, whose SXM form the machines here have.
  static const std::vector<std::pair<std::string, double>> table = {
      {"H100 PCIe", 756e12}, {"H100", 989e12}, {"H200", 989e12}, {"A100", 312e12},
  };
  for (const auto& [name, peak] : table)
    if (gpu_name.find(name) != std::string::npos) return peak;
  return 0.0;
}

double peak_flops(const config::TrainConfig& train, const std::string& gpu_name) {
  return train.peak_flops > 0 ? train.peak_flops : gpu_peak_flops(gpu_name);
}

double mfu(double flops_per_token, double tokens_per_s, double peak) {
  if (!(peak > 0)) return std::numeric_limits<double>::quiet_NaN();
  return flops_per_token * tokens_per_s / peak;
}

std::string format_mfu(double mfu) {
  return std::isfinite(mfu) ? fmt::format("{:.1f}%", 100.0 * mfu) : std::string("-");
}

double peak_memory_mib(const torch::Device& device) {
  if (device.is_cuda()) {
    const int64_t bytes = kernels::cuda_peak_allocated_bytes(device.has_index() ? device.index() : 0);
    return bytes < 0 ? -1.0 : static_cast<double>(bytes) / (1024.0 * 1024.0);
  }
  struct rusage usage {};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return -1.0;
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

}  // namespace attnbench::train
