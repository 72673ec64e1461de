// The registered attention variants (DESIGN.md): presets over the family of variants/family.h.
// Each differs only in its defaults; every part stays overridable in [attention].
#include "variants/family.h"
#include "variants/registry.h"

namespace attnbench::variants {
namespace {

FamilyDefaults preset(std::string position, std::string normalizer) {
  FamilyDefaults d;
  d.position = std::move(position);
  d.normalizer = std::move(normalizer);
  return d;
}

const RegisterVariant softmax(
    family_schema("softmax", "standard causal softmax attention with RoPE (the baseline)",
                  preset("rope", "softmax")),
    make_family_variant);

const RegisterVariant alibi(
    family_schema("alibi", "softmax attention with ALiBi linear distance penalties, no RoPE",
                  preset("alibi", "softmax")),
    make_family_variant);

const RegisterVariant rope_bias(
    family_schema("rope_bias",
                  "RoPE plus a learnable per-head distance bias, softmax: positional "
                  "discrimination alone",
                  preset("rope+distance_bias", "softmax")),
    make_family_variant);

const RegisterVariant elastic(
    family_schema("elastic",
                  "RoPE with Elastic-Softmax ReLU(p + tau_h / n_i), tau_init -1, no "
                  "renormalisation",
                  preset("rope", "elastic")),
    make_family_variant);

// The paper's method (PAPER_NOTES 1.2-1.3, the authors' post-review code): tau_h / n_i with
// tau_init = -1 and no renormalisation.
const RegisterVariant lazy(
    family_schema("lazy",
                  "Lazy Attention: RoPE + learnable distance bias, Elastic-Softmax "
                  "ReLU(p + tau_h / n_i), tau_init -1, no renormalisation",
                  preset("rope+distance_bias", "elastic")),
    make_family_variant);

}  // namespace
}  // namespace attnbench::variants
