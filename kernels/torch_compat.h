// LibTorch API differences kept in one place (docs/toolchain.md, "LibTorch 1.13 and 2.x": 1.13
// here, 2.x on the GPU machines). Only bench/ and tests call these; the harness never depends on
// them.
#pragma once
#include <torch/torch.h>
#include <torch/version.h>

#include <tuple>

namespace attnbench::kernels {

// LibTorch's own causal softmax attention on q, k, v [B, H, T, D]: an outside reference for our
// softmax kernels. 1.13 has only the private at::_scaled_dot_product_attention(q, k, v, mask,
// dropout, need_weights, is_causal), which returns (output, weights); 2.x made it public with a
// different signature.
inline torch::Tensor torch_causal_attention(const torch::Tensor& q, const torch::Tensor& k,
                                            const torch::Tensor& v) {
#if TORCH_VERSION_MAJOR >= 2
  return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, /*dropout_p=*/0.0,
                                          /*is_causal=*/true);
#else
  return std::get<0>(at::_scaled_dot_product_attention(q, k, v, /*attn_mask=*/{},
                                                       /*dropout_p=*/0.0,
                                                       /*need_attn_weights=*/false,
                                                       /*is_causal=*/true));
#endif
}

}  // namespace attnbench::kernels
