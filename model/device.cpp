#include "model/device.h"

#include <cstdlib>

#include "core/common/error.h"
#include "kernels/torch_compat.h"

namespace attnbench::model {

torch::Device resolve_device(const std::string& setting, const std::string& key) {
  if (setting == "cpu") return torch::Device(torch::kCPU);
  const bool cuda = torch::cuda::is_available();
  if (setting == "auto") return cuda ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  if (setting == "cuda") {
    if (!cuda) {
      throw UsageError(key + " = \"cuda\", but no CUDA device is usable here (this LibTorch " +
                       (at::hasCUDA() ? "sees no GPU" : "is built without CUDA") +
                       "); use \"cpu\", or \"auto\" to take a GPU only when there is one");
    }
    return torch::Device(torch::kCUDA, 0);
  }
  throw UsageError(key + " = \"" + setting + "\" is not one of auto, cpu, cuda" +
                   did_you_mean(setting, {"auto", "cpu", "cuda"}));
}

std::string gpu_name(const torch::Device& device) {
  if (!device.is_cuda()) return "";
  return kernels::cuda_device_name(device.has_index() ? device.index() : 0);
}

std::string device_description(const torch::Device& device) {
  const std::string name = gpu_name(device);
  return name.empty() ? device.str() : device.str() + " (" + name + ")";
}

void check_precision(const config::TrainConfig& train, const torch::Device& device) {
  if (train.precision == "bf16" && !device.is_cuda()) {
    throw UsageError("train.precision = \"bf16\" needs a CUDA device (train.device = \"" +
                     train.device + "\" runs on the CPU here); use \"fp32\" on the CPU");
  }
}

void apply_numerics(const config::TrainConfig& train) {
  auto& ctx = at::globalContext();
  ctx.setAllowTF32CuBLAS(train.tf32);
  if (train.deterministic) {
    // cuBLAS is deterministic only with a fixed workspace; it reads this when its first handle is
    // made, which is after this call (the model has not run yet). A value the user set wins.
    ::setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);
  }
  ctx.setDeterministicAlgorithms(train.deterministic, /*warn_only=*/false);
  ctx.setDeterministicCuDNN(train.deterministic);
  if (train.deterministic) ctx.setBenchmarkCuDNN(false);
}

}  // namespace attnbench::model
