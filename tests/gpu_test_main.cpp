// The main of every GPU test executable (tests/CMakeLists.txt, attnbench_gpu_test): exit 77, which
// CTest reports as Skipped, where no CUDA device is usable; otherwise run the executable's cases.
// Compiled once: Catch's runner is the costliest part of a test file to compile.
#define CATCH_CONFIG_RUNNER
#include <torch/torch.h>

#include <cstdio>

// After every torch header (docs/toolchain.md, "Catch2 and glog's CHECK").
#include <catch2/catch.hpp>

int main(int argc, char** argv) {
  if (!torch::cuda::is_available()) {
    std::puts("skipped: no CUDA device");
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
