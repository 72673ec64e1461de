// Self-registration of attention variants: one RegisterVariant object per registered name, in the
// variant's own .cpp file. ab_variant_impls is linked whole (cmake/Libraries.cmake) so that no
// registration is dropped by the linker; tests assert the full list of names.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/config/attention_schema.h"
#include "variants/variant.h"

namespace attnbench::variants {

using VariantFactory = std::function<std::shared_ptr<AttentionVariantImpl>(const VariantContext&)>;

struct RegisterVariant {
  RegisterVariant(config::VariantSchema schema, VariantFactory factory);
};

// Names with a registered factory, sorted (equals config::variant_names()).
std::vector<std::string> registered_variants();

// Builds the variant named by ctx.attention.variant (the config has been validated against its
// schema already).
std::shared_ptr<AttentionVariantImpl> make_variant(const VariantContext& ctx);

}  // namespace attnbench::variants
