// Shared by the SDPA route's tests (sdpa_test.cpp on the CPU, sdpa_gpu_test.cpp on a GPU).
#pragma once
#include <torch/torch.h>

#include <algorithm>
#include <string>

#include "kernels/attention_family.h"
#include "variants/position.h"

namespace attnbench::test {

// max |got - want| / max |want| (denominator at least 1e-8).
inline double relative(const torch::Tensor& got, const torch::Tensor& want) {
  auto g = got.to(torch::kCPU, torch::kFloat64), w = want.to(torch::kCPU, torch::kFloat64);
  return (g - w).abs().max().item<double>() / std::max(w.abs().max().item<double>(), 1e-8);
}

// The spec of a position part with fresh parameters (distance bias drawn away from 0).
inline kernels::FamilySpec spec_for(const std::string& position, int64_t H, int64_t W,
                                    torch::ScalarType dtype) {
  kernels::FamilySpec s;
  if (position.find("alibi") != std::string::npos) {
    s.alibi_slopes = torch::tensor(attnbench::variants::alibi_slopes(H), torch::kFloat64);
  }
  if (position.find("distance_bias") != std::string::npos) {
    s.distance_bias = (torch::randn({H, W}, torch::kFloat32) * 0.5).to(dtype).requires_grad_(true);
  }
  return s;
}

}  // namespace attnbench::test
