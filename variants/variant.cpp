#include "variants/variant.h"

namespace attnbench::variants {
namespace {

// past := [past, now] along `dim` (now alone when nothing is cached yet).
void append(torch::Tensor& past, const torch::Tensor& now, int64_t dim) {
  past = past.defined() ? torch::cat({past, now}, dim) : now;
}

torch::Tensor repeat(const torch::Tensor& t, int64_t n) {
  return t.defined() ? t.repeat_interleave(n, 0) : t;
}

}  // namespace

void KVCache::repeat_rows(int64_t n) {
  k = repeat(k, n);
  v = repeat(v, n);
  x = repeat(x, n);
  q = repeat(q, n);
}

torch::Tensor AttentionVariantImpl::forward_incremental(const torch::Tensor& q,
                                                        const torch::Tensor& k,
                                                        const torch::Tensor& v,
                                                        const torch::Tensor& x, KVCache& cache) {
  append(cache.k, k, 2);
  append(cache.v, v, 2);
  append(cache.x, x, 1);
  if (incremental_unsupported().empty()) return forward(q, cache.k, cache.v, cache.x);
  // Full recomputation: every row over all positions, then the new ones.
  append(cache.q, q, 2);
  const int64_t T = q.size(2);
  return forward(cache.q, cache.k, cache.v, cache.x).narrow(2, cache.length() - T, T);
}

}  // namespace attnbench::variants
