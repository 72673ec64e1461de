// Self-registration of attention variants: one RegisterVariant object per registered name, in the
// variant's own .cpp file, carrying everything the rest of attnbench asks of a variant (its schema
// and config checks, its factory, the closed-form count and the weight decay of its own
// parameters); learned statistics come from the module itself (variant.h). ab_variants is
// linked whole (cmake/Libraries.cmake) so that no registration is dropped by the linker; a test
// compares the registered names with the registrations in the sources.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/common/registry.h"
#include "core/config/attention_schema.h"
#include "variants/variant.h"

namespace attnbench::variants {

using VariantFactory = std::function<std::shared_ptr<AttentionVariantImpl>(const VariantContext&)>;
// The number of the variant's own parameters in one layer, in closed form (no module is built):
// `attnbench train --dry-run` and model/param_count.h; tests compare it with the built module.
using ParameterCount = std::function<int64_t(const VariantContext&)>;
// Whether the variant's own parameter `name` (as in the variant module's named_parameters())
// takes weight decay.
using DecayRule = std::function<bool(const std::string& name, const torch::Tensor& param)>;

// Built field by field in each variant's file, e.g. variants/softpick.cpp.
struct VariantRegistration {
  // Name, description, parameters, config checks, and which fused kernels serve it: the one
  // source of that answer. A variant whose schema names no kernel is eager only, and make_variant
  // refuses backend = "fused" for it.
  config::VariantSchema schema;
  VariantFactory factory;
  ParameterCount parameter_count;
  DecayRule decays;  // empty: none of the variant's own parameters decays
  // model.init_from (docs/pretrained.md, "Continuing a pretrained model"): why the variant, as
  // configured, does not start by computing the pretrained model's attention, causal softmax with
  // RoPE ("" when it does, exactly). Empty: it never does.
  std::function<std::string(const config::AttentionConfig&)> pretrained_start;
};

struct RegisterVariant {
  explicit RegisterVariant(VariantRegistration registration);
};

// Names with a registered factory, sorted (equals config::variant_names()).
std::vector<std::string> registered_variants();

// The registration of `name`; a UsageError listing the registered names otherwise.
const VariantRegistration& find_variant(const std::string& name);

// The context a variant is built with, from the model's shape and the resolved [attention].
VariantContext variant_context(const config::ModelConfig& model,
                               const config::AttentionConfig& attention);

// Builds the variant named by ctx.attention.variant (the config has been validated against its
// schema already). UsageError for an unknown backend, or backend = "fused" on an eager-only variant.
std::shared_ptr<AttentionVariantImpl> make_variant(const VariantContext& ctx);

// The variant's own parameters in one layer (its registration's closed form).
int64_t variant_parameter_count(const VariantContext& ctx);

// Whether parameter `name` of `variant` (a local name, as in variant.named_parameters()) decays.
bool variant_parameter_decays(const AttentionVariantImpl& variant, const std::string& name,
                              const torch::Tensor& param);

}  // namespace attnbench::variants
