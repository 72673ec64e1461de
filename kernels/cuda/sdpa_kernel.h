// The softmax forms of the attention family on LibTorch's SDPA, for CUDA tensors (docs/kernels.md,
// "CUDA"; routes in kernels/sdpa.h). The CUDA kernel (kernels/cuda/cuda_kernel.cpp) sends them here.
#pragma once
#include <torch/torch.h>

#include <string>

#include "kernels/attention_family.h"

namespace attnbench::kernels {

torch::Tensor sdpa_forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                           const FamilySpec& spec);
// Why SDPA cannot compute the call, "" when it can (kernels/sdpa.h, plus devices and LibTorch 2.x).
std::string sdpa_limits(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const FamilySpec& spec);

}  // namespace attnbench::kernels
