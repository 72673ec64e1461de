#include "kernels/attention_family.h"

#include <map>

namespace attnbench::kernels {
namespace {
std::map<torch::DeviceType, FusedKernel>& registry() {
  static std::map<torch::DeviceType, FusedKernel> all;
  return all;
}
}  // namespace

void register_fused_kernel(torch::DeviceType device, FusedKernel kernel) {
  registry()[device] = std::move(kernel);
}

const FusedKernel* find_fused_kernel(torch::DeviceType device) {
  auto it = registry().find(device);
  return it == registry().end() ? nullptr : &it->second;
}

}  // namespace attnbench::kernels
