// Optional tensors through a custom autograd function (torch::autograd::Function::apply): apply
// records the device, dtype and shape of every tensor argument (VariableInfo), and an undefined
// tensor has none ("tensor does not have a device", LibTorch 1.13 and 2.11 alike). So an absent
// optional input travels as an empty placeholder, and forward turns it back into an undefined
// tensor. The fused CPU and CUDA kernels both pass their optional parameters (tau, the distance
// bias, ALiBi's slopes, ...) this way.
#pragma once
#include <torch/torch.h>

namespace attnbench::kernels {

inline torch::Tensor placeholder(const torch::Tensor& t) {
  return t.defined() ? t : torch::empty({0});
}

inline torch::Tensor present(const torch::Tensor& t) {
  return t.numel() > 0 ? t : torch::Tensor();
}

}  // namespace attnbench::kernels
