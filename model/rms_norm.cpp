#include "model/rms_norm.h"

namespace attnbench::model {

RMSNormImpl::RMSNormImpl(int64_t dim, double eps) : eps_(eps) {
  weight = register_parameter("weight", torch::ones({dim}));
}

torch::Tensor RMSNormImpl::forward(const torch::Tensor& x) {
  // The statistic in float32 at least, so that a bf16 activation does not lose the scale.
  auto xf = x.to(torch::promote_types(x.scalar_type(), torch::kFloat));
  auto y = xf * torch::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps_);
  return y.to(x.scalar_type()) * weight;
}

}  // namespace attnbench::model
