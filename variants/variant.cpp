#include "variants/variant.h"

namespace attnbench::variants {
namespace {

// past := [past, now] along `dim` (now alone when nothing is cached yet).
void append(torch::Tensor& past, const torch::Tensor& now, int64_t dim) {
  past = past.defined() ? torch::cat({past, now}, dim) : now;
}

torch::Tensor select_rows(const torch::Tensor& t, const torch::Tensor& rows) {
  return t.defined() ? t.index_select(0, rows.to(t.device())) : t;
}

}  // namespace

KVCache KVCache::select(const torch::Tensor& rows) const {
  return {select_rows(k, rows), select_rows(v, rows), select_rows(x, rows), select_rows(q, rows)};
}

torch::Tensor repeat_kv(const torch::Tensor& t, int64_t n_rep) {
  return n_rep == 1 ? t : t.repeat_interleave(n_rep, 1);
}

torch::Tensor AttentionVariantImpl::forward_incremental(const torch::Tensor& q,
                                                        const torch::Tensor& k,
                                                        const torch::Tensor& v,
                                                        const torch::Tensor& x, KVCache& cache,
                                                        int64_t kv_repeat) {
  append(cache.k, k, 2);
  append(cache.v, v, 2);
  append(cache.x, x, 1);
  // The cache keeps one copy per key/value head; the variant sees every query head's.
  const torch::Tensor keys = repeat_kv(cache.k, kv_repeat), values = repeat_kv(cache.v, kv_repeat);
  if (incremental_unsupported().empty()) return forward(q, keys, values, cache.x);
  // Full recomputation: every row over all positions, then the new ones.
  append(cache.q, q, 2);
  const int64_t T = q.size(2);
  return forward(cache.q, keys, values, cache.x).narrow(2, cache.length() - T, T);
}

}  // namespace attnbench::variants
