// The contract of an attention variant (docs/variants.md, "The contract"). A variant receives k, v
// of shape [B, H, T, D] (projections done, no positional encoding applied yet), the queries of the
// last Tq <= T of those positions, q [B, H, Tq, D], and the layer's hidden input x [B, T, C] at all
// T positions (for data-dependent parameters such as per-token tau or a forgetting gate), and
// returns the attention output of the queries [B, H, Tq, D]. Training has Tq = T; incremental
// decoding (forward_incremental) has Tq < T, the earlier keys coming from a KVCache. The model
// never knows which variant it runs.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "core/config/run_config.h"

namespace attnbench::variants {

// Grouped-query attention (Llama's repeat_kv): t [B, H_kv, T, D] -> [B, H_kv * n_rep, T, D], key/value
// head j serving query heads j n_rep .. (j + 1) n_rep - 1; t itself when n_rep is 1.
torch::Tensor repeat_kv(const torch::Tensor& t, int64_t n_rep);

// What one layer keeps of the positions it has seen, for incremental decoding: the inputs of
// forward at those positions, as forward received them (k, v before any RoPE and before they are
// repeated for grouped-query attention, so a cache holds n_kv_head heads; x the hidden input).
// q is kept only for a variant that cannot take fewer queries than keys (it recomputes every row).
struct KVCache {
  torch::Tensor k, v;  // [B, H_kv, P, D]: one per key/value head (grouped-query attention)
  torch::Tensor x;     // [B, P, C]
  torch::Tensor q;     // [B, H, P, D] or undefined
  int64_t length() const { return k.defined() ? k.size(2) : 0; }  // P
  // A cache whose row i is this cache's row rows[i] ([N] int64): e.g. one shared context for
  // several continuations.
  KVCache select(const torch::Tensor& rows) const;
};

struct VariantContext {
  int64_t n_head = 0;
  int64_t n_kv_head = 0;    // key/value heads (grouped-query attention); 0 = n_head. forward
                            // receives k and v repeated to n_head heads (repeat_kv)
  int64_t head_dim = 0;
  int64_t d_model = 0;
  int64_t context_length = 0;
  int64_t layer = 0;        // 0-based depth of the layer (differential attention's lambda_init)
  double init_std = 0.02;   // model.init_std: the std of the decoder's projections, for a
                            // variant's own projections (e.g. an output gate's W_g)
  double norm_eps = 1e-5;   // model.norm_eps: the decoder's RMSNorm eps, for a variant's own norm
  config::AttentionConfig attention;  // resolved: every applicable parameter present
};

// One learned quantity of a variant, as diagnostics store it (attn_stats rows named `name`) and
// the report plots it (generically: a new variant's statistic needs no change there).
struct LearnedStatistic {
  enum class Kind {
    PerHead,     // values [H]: one number per head, e.g. tau_h
    Profile,     // values [H, R]: a profile per head over an index r, e.g. distance_bias b[h, r]
    TokenMean,   // values [B, T, H]: per query token; the statistic is its mean over the text's
                 // tokens, e.g. tau_offset_mean = mean of g_h(x_i)
  };
  std::string name;   // the stat's name in the store, e.g. "tau"
  std::string label;  // for people, e.g. "learned tau_h"
  Kind kind = Kind::PerHead;
  torch::Tensor values;
};

class AttentionVariantImpl : public torch::nn::Module {
 public:
  ~AttentionVariantImpl() override = default;

  // When `weights` is non-null the variant also stores its post-normaliser attention weights
  // [B, H, Tq, T] there (for diagnostics; computed by the eager path).
  virtual torch::Tensor forward(const torch::Tensor& q, const torch::Tensor& k,
                                const torch::Tensor& v, const torch::Tensor& x,
                                torch::Tensor* weights = nullptr) = 0;

  // Why forward cannot take fewer queries than keys, "" when it can (the default; the property
  // tests hold every registered variant to "forward over all positions == forward over a prefix,
  // then forward_incremental over the rest"). A variant that cannot is still decoded
  // incrementally, by recomputing all its rows at every step.
  virtual std::string incremental_unsupported() const { return ""; }

  // The attention output [B, H, T, D] of T new positions following the cache's P: q [B, H, T, D],
  // k, v [B, H / kv_repeat, T, D] (each key/value head serving kv_repeat query heads) and x
  // [B, T, C] of the new positions only. Appends them to `cache` as given. Equals rows P..P+T-1 of
  // forward over all P + T positions with k and v repeated.
  torch::Tensor forward_incremental(const torch::Tensor& q, const torch::Tensor& k,
                                    const torch::Tensor& v, const torch::Tensor& x,
                                    KVCache& cache, int64_t kv_repeat = 1);

  // How the output follows from the weights forward stores (the eager path; v and x of all T
  // positions, weights [B, H, Tq, T]): weights @ v unless the
  // variant adds more (a learned sink value, an output gate, a per-head normalisation). The
  // property tests check forward(q, k, v, x) == output_from_weights(weights, v, x) for every
  // variant, so the weights diagnostics measure are the ones the output was computed from.
  virtual torch::Tensor output_from_weights(const torch::Tensor& weights, const torch::Tensor& v,
                                            const torch::Tensor& x) {
    (void)x;
    return torch::matmul(weights.to(v.scalar_type()), v);
  }

  // The learned quantities diagnostics record, given the layer's hidden input x [B, T, C] (the
  // same x forward receives). Profiles cover at most the T distances x can show. Default: none.
  virtual std::vector<LearnedStatistic> learned(const torch::Tensor& x) {
    (void)x;
    return {};
  }

  // The registered name this module was built under (set by make_variant): the optimizer asks
  // that registration which of the module's own parameters take weight decay.
  const std::string& variant_name() const { return variant_name_; }

 private:
  friend std::shared_ptr<AttentionVariantImpl> make_variant(const VariantContext& ctx);
  std::string variant_name_;
};

}  // namespace attnbench::variants
