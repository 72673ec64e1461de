// Compiled only by the CUDA build (-DATTNBENCH_CUDA=ON, cmake/Libraries.cmake): proves that nvcc,
// the host compiler and TORCH_CUDA_ARCH_LIST's flags work together. Torch-free on purpose: a .cu file
// that includes ATen takes 30-55 s to compile, this one about 3 s (docs/toolchain.md, "CUDA build").
#include <cuda_runtime.h>

namespace attnbench::cuda_probe {

__global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}

// Never called; keeps the kernel referenced.
cudaError_t launch_axpy(float a, const float* x, float* y, int n, cudaStream_t stream) {
  axpy<<<(n + 255) / 256, 256, 0, stream>>>(a, x, y, n);
  return cudaGetLastError();
}

}  // namespace attnbench::cuda_probe
