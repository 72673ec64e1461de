#include "kernels/attention_family.h"

namespace attnbench::kernels {

Registry<FusedKernel>& fused_kernels() {
  static Registry<FusedKernel> all("fused attention kernel for device");  // safe from init order
  return all;
}

void register_fused_kernel(const std::string& device, FusedKernel kernel) {
  if (!kernel.forward || !kernel.unsupported) {  // dispatch calls both; recorded, as duplicates are
    detail::registration_error_list().push_back(fused_kernels().kind() + " '" + device + "' (" +
                                                kernel.name + ") registered without " +
                                                (kernel.forward ? "unsupported()" : "forward()"));
    return;
  }
  fused_kernels().add(device, std::move(kernel));
}

const FusedKernel* find_fused_kernel(torch::DeviceType device) {
  return fused_kernels().find(c10::DeviceTypeName(device, /*lower_case=*/true));
}

}  // namespace attnbench::kernels
