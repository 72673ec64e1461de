#include "model/pretrained/architecture.h"

#include <set>

#include "core/common/registry.h"

namespace attnbench::model::pretrained {

namespace {

Registry<Architecture>& registry() {
  static Registry<Architecture> r("model_type");
  return r;
}

// rope_type (or the older "type") of a scaling object; "default" means none.
RopeScaling scaling_type(const HFConfig& cfg, const std::string& key, const nlohmann::json& obj) {
  const auto type = obj.contains("rope_type") ? obj["rope_type"] : obj.value("type", nlohmann::json());
  if (!type.is_string()) cfg.refuse(key, "expected rope_type to be a string");
  const std::string t = type.get<std::string>();
  if (t == "default") return RopeScaling::None;
  if (t == "linear") return RopeScaling::Linear;
  if (t == "llama3") return RopeScaling::Llama3;
  cfg.refuse(key, "rope type '" + t + "' is not supported (supported: default, linear, llama3)");
}

double field(const HFConfig& cfg, const std::string& key, const nlohmann::json& obj,
             const std::string& name) {
  if (!obj.contains(name) || !obj[name].is_number()) cfg.refuse(key, "expected a number " + name);
  return obj[name].get<double>();
}

// The scaling parameters of `obj` (rope_scaling, or rope_parameters of transformers 5). A field
// this code does not read would change the frequencies unseen: refused.
void read_scaling(const HFConfig& cfg, const std::string& key, const nlohmann::json& obj, Rope& rope) {
  for (const auto& [name, value] : obj.items()) {
    static const std::set<std::string> known = {
        "rope_type", "type", "rope_theta", "factor", "low_freq_factor", "high_freq_factor",
        "original_max_position_embeddings", "partial_rotary_factor"};
    if (!known.count(name)) cfg.refuse(key, "field '" + name + "' is not supported");
  }
  rope.scaling = scaling_type(cfg, key, obj);
  if (rope.scaling == RopeScaling::None) return;
  rope.factor = field(cfg, key, obj, "factor");
  if (rope.scaling == RopeScaling::Llama3) {
    rope.low_freq_factor = field(cfg, key, obj, "low_freq_factor");
    rope.high_freq_factor = field(cfg, key, obj, "high_freq_factor");
    rope.original_context =
        static_cast<int64_t>(field(cfg, key, obj, "original_max_position_embeddings"));
  }
}

}  // namespace

const Architecture& architecture(const std::string& model_type, const std::string& context) {
  return registry().get(model_type, context);
}

std::vector<std::string> architecture_names() { return registry().names(); }

RegisterArchitecture::RegisterArchitecture(const std::string& model_type,
                                           decltype(Architecture::parse) parse,
                                           decltype(Architecture::load) load,
                                           decltype(Architecture::ignorable) ignorable) {
  Architecture a;
  a.parse = std::move(parse);
  a.load = std::move(load);
  a.ignorable = std::move(ignorable);
  registry().add(model_type, std::move(a));
}

Rope parse_rope(const HFConfig& cfg, int64_t head_dim, const std::string& theta_key,
                const std::string& fraction_key, double default_fraction) {
  Rope rope;
  double fraction = default_fraction;
  // transformers >= 5 writes one object, rope_parameters {rope_type, rope_theta, factor,
  // partial_rotary_factor, ...}; checkpoints on the hub carry rope_theta (GPT-NeoX:
  // rotary_emb_base), rope_scaling {type | rope_type, factor, ...} and GPT-NeoX's rotary_pct.
  if (const auto params = cfg.object("rope_parameters")) {
    rope.theta = field(cfg, "rope_parameters", *params, "rope_theta");
    if (params->contains("partial_rotary_factor")) {
      fraction = field(cfg, "rope_parameters", *params, "partial_rotary_factor");
    }
    read_scaling(cfg, "rope_parameters", *params, rope);
  } else {
    rope.theta = cfg.number(theta_key, 10000.0);
    if (!fraction_key.empty()) fraction = cfg.number(fraction_key, default_fraction);
    if (const auto scaling = cfg.object("rope_scaling")) read_scaling(cfg, "rope_scaling", *scaling, rope);
  }
  // transformers: dim = int(head_dim * partial_rotary_factor), pairs (i, i + dim / 2).
  rope.dims = static_cast<int64_t>(static_cast<double>(head_dim) * fraction);
  if (rope.dims <= 0 || rope.dims > head_dim || rope.dims % 2 != 0) {
    cfg.refuse(fraction_key.empty() ? "rope_parameters" : fraction_key,
               "the rotated dimensions must be even and within the head dimension " +
                   std::to_string(head_dim) + " (got " + std::to_string(rope.dims) + ")");
  }
  return rope;
}

Mlp parse_gelu(const HFConfig& cfg, const std::string& key, const std::string& fallback) {
  const std::string act = cfg.string(key, fallback);
  if (act == "gelu") return Mlp::GeluExact;
  // GPT-2's gelu_new and its aliases: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
  if (act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast") return Mlp::GeluTanh;
  cfg.refuse(key, "activation '" + act + "' is not supported (supported: gelu, gelu_new, "
                  "gelu_pytorch_tanh, gelu_fast)");
}

}  // namespace attnbench::model::pretrained
