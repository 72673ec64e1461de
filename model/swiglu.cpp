#include "model/swiglu.h"

namespace attnbench::model {

SwiGLUImpl::SwiGLUImpl(int64_t d_model, int64_t d_ffn) {
  auto linear = [](int64_t in, int64_t out) {
    return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false));
  };
  gate = register_module("gate", linear(d_model, d_ffn));
  up = register_module("up", linear(d_model, d_ffn));
  down = register_module("down", linear(d_ffn, d_model));
}

torch::Tensor SwiGLUImpl::forward(const torch::Tensor& x) {
  return down(torch::silu(gate(x)) * up(x));
}

}  // namespace attnbench::model
