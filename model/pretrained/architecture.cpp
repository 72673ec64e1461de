#include "model/pretrained/architecture.h"

#include <cmath>
#include <set>

#include "core/common/registry.h"

namespace attnbench::model::pretrained {

namespace {

Registry<Architecture>& registry() {
  static Registry<Architecture> r("model_type");
  return r;
}

using variants::RopeFrequencies;
using variants::RopeScaling;

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

// A finite number above 0 (transformers divides by each of these).
double field(const HFConfig& cfg, const std::string& key, const nlohmann::json& obj,
             const std::string& name) {
  if (!obj.contains(name) || !obj[name].is_number()) cfg.refuse(key, "expected a number " + name);
  const double v = obj[name].get<double>();
  if (!(std::isfinite(v) && v > 0)) cfg.refuse(key, name + " must be a finite number above 0");
  return v;
}

// The scaling of `obj` (rope_scaling, or rope_parameters of transformers 5) into `f`. A field
// this code does not read would change the frequencies unseen: refused.
void read_scaling(const HFConfig& cfg, const std::string& key, const nlohmann::json& obj,
                  RopeFrequencies& f) {
  for (const auto& [name, value] : obj.items()) {
    static const std::set<std::string> known = {
        "rope_type", "type", "rope_theta", "factor", "low_freq_factor", "high_freq_factor",
        "original_max_position_embeddings", "partial_rotary_factor"};
    if (!known.count(name)) cfg.refuse(key, "field '" + name + "' is not supported");
  }
  f.scaling = scaling_type(cfg, key, obj);
  if (f.scaling == RopeScaling::None) return;
  f.factor = field(cfg, key, obj, "factor");
  if (f.scaling == RopeScaling::Llama3) {
    f.low_freq_factor = field(cfg, key, obj, "low_freq_factor");
    f.high_freq_factor = field(cfg, key, obj, "high_freq_factor");
    // transformers divides by it as a float: 256.5 stays 256.5.
    f.original_context = field(cfg, key, obj, "original_max_position_embeddings");
    if (!(f.high_freq_factor > f.low_freq_factor)) {
      cfg.refuse(key, "high_freq_factor must exceed low_freq_factor");
    }
  }
}

bool same_scaling(const RopeFrequencies& a, const RopeFrequencies& b) {
  return a.scaling == b.scaling && a.factor == b.factor &&
         a.low_freq_factor == b.low_freq_factor && a.high_freq_factor == b.high_freq_factor &&
         a.original_context == b.original_context;
}

// One value given under several keys (rope_parameters' and the older top-level ones): each must
// agree, or which one transformers takes would depend on its version.
struct Agreed {
  std::string key;
  double value = 0;
  bool found = false;
  void add(const HFConfig& cfg, const std::string& where, double v) {
    if (found && v != value) {
      cfg.refuse(where, "disagrees with " + key + " = " + nlohmann::json(value).dump() +
                            " (both set the same RoPE value)");
    }
    key = where;
    value = v;
    found = true;
  }
};

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

Rope parse_rope(const HFConfig& cfg, int64_t head_dim, const std::vector<std::string>& theta_keys,
                const std::vector<std::string>& fraction_keys, double default_fraction) {
  // transformers >= 5 writes one object, rope_parameters {rope_type, rope_theta, factor,
  // partial_rotary_factor, ...}; checkpoints on the hub carry rope_theta (GPT-NeoX:
  // rotary_emb_base), rope_scaling {type | rope_type, factor, ...} and GPT-NeoX's rotary_pct.
  Agreed theta, fraction;
  Rope rope;
  const auto params = cfg.object("rope_parameters");
  const auto scaling = cfg.object("rope_scaling");
  if (params) {
    if (params->contains("rope_theta")) {
      theta.add(cfg, "rope_parameters", field(cfg, "rope_parameters", *params, "rope_theta"));
    }
    if (params->contains("partial_rotary_factor")) {
      fraction.add(cfg, "rope_parameters",
                   field(cfg, "rope_parameters", *params, "partial_rotary_factor"));
    }
    read_scaling(cfg, "rope_parameters", *params, rope.frequencies);
  }
  for (const std::string& key : theta_keys) {
    if (cfg.has(key)) theta.add(cfg, key, cfg.positive(key, 1.0));
  }
  for (const std::string& key : fraction_keys) {
    if (cfg.has(key)) fraction.add(cfg, key, cfg.positive(key, 1.0));
  }
  cfg.ignore(theta_keys);
  cfg.ignore(fraction_keys);
  if (scaling) {
    RopeFrequencies f;
    read_scaling(cfg, "rope_scaling", *scaling, f);
    if (params && !same_scaling(f, rope.frequencies)) {
      cfg.refuse("rope_scaling", "disagrees with rope_parameters (both set the RoPE scaling)");
    }
    rope.frequencies = f;
  }
  rope.frequencies.theta = theta.found ? theta.value : 10000.0;
  // transformers: dim = int(head_dim * partial_rotary_factor), pairs (i, i + dim / 2).
  const double rotated =
      static_cast<double>(head_dim) * (fraction.found ? fraction.value : default_fraction);
  // A fraction above 1 is out of range; compared as a double, before a cast could overflow.
  rope.dims =
      rotated <= static_cast<double>(head_dim) ? static_cast<int64_t>(rotated) : head_dim + 1;
  if (rope.dims <= 0 || rope.dims > head_dim || rope.dims % 2 != 0) {
    cfg.refuse(fraction.found ? fraction.key : "rope_parameters",
               "the rotated dimensions must be even and within the head dimension " +
                   std::to_string(head_dim) + " (got " + std::to_string(rope.dims) + ")");
  }
  return rope;
}

int64_t whole_heads(const HFConfig& cfg, int64_t d_model, int64_t n_head,
                    const std::string& heads_key) {
  if (d_model % n_head != 0) {
    cfg.refuse(heads_key, "the heads must split the model's width " + std::to_string(d_model) +
                              " evenly");
  }
  return d_model / n_head;
}

Mlp parse_activation(const HFConfig& cfg, const std::string& key, const std::string& fallback) {
  const std::string act = cfg.string(key, fallback);
  if (act == "gelu") return Mlp::GeluExact;
  if (act == "relu") return Mlp::Relu;
  // GPT-2's gelu_new and its aliases: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
  if (act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast") return Mlp::GeluTanh;
  cfg.refuse(key, "activation '" + act + "' is not supported (supported: gelu, gelu_new, "
                  "gelu_pytorch_tanh, gelu_fast, relu)");
}

}  // namespace attnbench::model::pretrained
