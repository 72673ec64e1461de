#include "harness/cli/runtime.h"

#include <link.h>

#include <cstdlib>
#include <thread>

#include <torch/torch.h>

#include "harness/cli/command.h"

namespace attnbench::cli {

int init_threads(int threads) {
  if (threads > 0) {
    threads = cap_to_cores(threads, "threads");
  } else if (const char* env = std::getenv("OMP_NUM_THREADS"); env && std::atoi(env) > 0) {
    threads = cap_to_cores(std::atoi(env), "OMP_NUM_THREADS");
  } else {
    threads = static_cast<int>(std::thread::hardware_concurrency());
  }
  if (threads <= 0) threads = 1;
  torch::set_num_threads(threads);
  return threads;
}

std::string loaded_blas() {
  // The pip wheel's LibTorch (the CUDA build) has MKL linked into libtorch_cpu.so: no BLAS library
  // is loaded, and libcublas is not the CPU's BLAS.
  if (at::hasMKL()) return "MKL (linked into LibTorch)";
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        std::string name = info->dlpi_name ? info->dlpi_name : "";
        auto* out = static_cast<std::string*>(data);
        // libopenblas*.so (direct) or libblas.so.3 (through the Debian alternative).
        if (name.find("cublas") != std::string::npos) return 0;
        if (name.find("blas") != std::string::npos && out->empty()) *out = name;
        if (name.find("openblas") != std::string::npos) *out = name;
        return 0;
      },
      &found);
  return found;
}

bool is_reference_blas(const std::string& blas_path) {
  return blas_path.empty() || (blas_path.find("openblas") == std::string::npos &&
                                blas_path.find("MKL") == std::string::npos);
}

}  // namespace attnbench::cli
