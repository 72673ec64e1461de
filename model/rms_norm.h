// RMSNorm (Zhang & Sennrich 2019), the pre-norm of the Llama-style block:
//   y = x / sqrt(mean(x^2) + eps) * weight,  weight init 1, no bias, no mean subtraction.
#pragma once
#include <torch/torch.h>

namespace attnbench::model {

class RMSNormImpl : public torch::nn::Module {
 public:
  RMSNormImpl(int64_t dim, double eps);
  torch::Tensor forward(const torch::Tensor& x);

  torch::Tensor weight;

 private:
  double eps_;
};
TORCH_MODULE(RMSNorm);

}  // namespace attnbench::model
