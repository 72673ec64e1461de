#include "variants/registry.h"

#include <map>

#include "core/common/error.h"

namespace attnbench::variants {
namespace {
std::map<std::string, VariantFactory>& factories() {
  static std::map<std::string, VariantFactory> all;
  return all;
}
}  // namespace

RegisterVariant::RegisterVariant(config::VariantSchema schema, VariantFactory factory) {
  std::string name = schema.name;
  config::register_variant_schema(std::move(schema));  // throws on a duplicate name
  factories().emplace(name, std::move(factory));
}

std::vector<std::string> registered_variants() {
  std::vector<std::string> names;
  for (auto& [name, f] : factories()) names.push_back(name);
  return names;
}

std::shared_ptr<AttentionVariantImpl> make_variant(const VariantContext& ctx) {
  const std::string& name = ctx.attention.variant;
  auto it = factories().find(name);
  if (it == factories().end()) {
    auto names = registered_variants();
    throw UsageError("unknown attention variant '" + name + "'; registered: " + join(names) +
                     did_you_mean(name, names));
  }
  return it->second(ctx);
}

}  // namespace attnbench::variants
