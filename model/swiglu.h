// The SwiGLU feed-forward of the Llama block (Shazeer 2020): down(silu(gate(x)) * up(x)), no biases.
#pragma once
#include <torch/torch.h>

namespace attnbench::model {

class SwiGLUImpl : public torch::nn::Module {
 public:
  SwiGLUImpl(int64_t d_model, int64_t d_ffn);
  torch::Tensor forward(const torch::Tensor& x);

  torch::nn::Linear gate{nullptr}, up{nullptr}, down{nullptr};
};
TORCH_MODULE(SwiGLU);

}  // namespace attnbench::model
