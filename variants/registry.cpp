#include "variants/registry.h"

#include "core/common/error.h"

namespace attnbench::variants {
namespace {
Registry<VariantRegistration>& registrations() {
  static Registry<VariantRegistration> all("attention variant");  // function-local: init order
  return all;
}
}  // namespace

RegisterVariant::RegisterVariant(VariantRegistration registration) {
  const std::string name = registration.schema.name;
  // A duplicate is recorded once, by the registry below; the first schema stays in config.
  if (!registrations().find(name)) config::register_variant_schema(registration.schema);
  registrations().add(name, std::move(registration));
}

std::vector<std::string> registered_variants() { return registrations().names(); }

const VariantRegistration& find_variant(const std::string& name) {
  return registrations().get(name);
}

VariantContext variant_context(const config::ModelConfig& model,
                               const config::AttentionConfig& attention) {
  VariantContext ctx;
  ctx.n_head = model.n_head;
  ctx.n_kv_head = model.kv_heads();
  ctx.head_dim = model.head_dim();
  ctx.d_model = model.d_model;
  ctx.context_length = model.context_length;
  ctx.init_std = model.init_std;
  ctx.norm_eps = model.norm_eps;
  ctx.attention = attention;
  return ctx;
}

std::shared_ptr<AttentionVariantImpl> make_variant(const VariantContext& ctx) {
  const VariantRegistration& registration = find_variant(ctx.attention.variant);
  config::check_backend(ctx.attention.backend);
  if (ctx.attention.backend == "fused" && registration.schema.kernels.empty()) {
    throw UsageError("attention.backend = \"fused\": no fused kernel serves attention variant '" +
                     ctx.attention.variant + "'; use backend = \"auto\" or \"eager\"");
  }
  std::shared_ptr<AttentionVariantImpl> variant = registration.factory(ctx);
  variant->variant_name_ = ctx.attention.variant;
  return variant;
}

int64_t variant_parameter_count(const VariantContext& ctx) {
  return find_variant(ctx.attention.variant).parameter_count(ctx);
}

bool variant_parameter_decays(const AttentionVariantImpl& variant, const std::string& name,
                              const torch::Tensor& param) {
  const DecayRule& decays = find_variant(variant.variant_name()).decays;
  return decays && decays(name, param);
}

}  // namespace attnbench::variants
