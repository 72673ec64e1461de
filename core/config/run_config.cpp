#include "core/config/run_config.h"

#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "core/common/error.h"
#include "core/common/regular_file.h"
#include "core/config/attention_schema.h"
#include "core/config/fields.h"
#include "core/config/sizes.h"
#include "core/config/toml_bridge.h"
#include "core/config/toml_depth.h"

namespace attnbench::config {
namespace {

using nlohmann::json;

// Size presets (docs/model.md, "Presets"): n_layer, d_model, n_head, d_ffn (0 = derived).
struct Preset {
  int64_t n_layer, d_model, n_head, d_ffn;
};
const std::map<std::string, Preset>& presets() {
  static const std::map<std::string, Preset> p = {
      {"tiny", {2, 128, 4, 0}},         {"small", {6, 384, 6, 0}},
      {"125m", {12, 768, 12, 0}},       {"340m", {24, 1024, 16, 2816}},
      {"760m", {24, 1536, 24, 4096}},
  };
  return p;
}

// Keys that change how a run executes but not what it computes; they stay in the canonical JSON
// (so the run records them) but not in the run id, so that e.g. resuming with more threads or the
// fused backend continues the same run, and adding evaluation tasks never retrains a model.
const std::set<std::string>& execution_only_keys() {
  static const std::set<std::string> keys = {
      "attention.backend", "train.threads", "train.device", "train.log_interval",
      "train.checkpoint_interval", "train.tf32", "train.deterministic", "train.peak_flops"};
  return keys;
}

// Keys added after run ids existed that change what is computed: hashed only when not at their
// default. Every config written before a key existed behaved as its default, so its run id stays
// the same, and a non-default value (a different model) gets an id of its own. A key added later
// belongs here unless it is execution-only.
const std::set<std::string>& hashed_unless_default_keys() {
  static const std::set<std::string> keys = {"train.precision", "model.n_kv_head",
                                             "model.init_from", "train.attention_lr_scale"};
  return keys;
}


// Why a number arrived as a string: a --set number beyond its type's range is not TOML, so it is
// read as a bare word.
std::string number_hint(const Value& v, ValueType want) {
  if (type_of(v) != ValueType::String) return "";
  const std::string& s = std::get<std::string>(v);
  char* end = nullptr;
  errno = 0;
  if (want == ValueType::Int) {
    std::strtoll(s.c_str(), &end, 10);
    if (errno == ERANGE && !s.empty() && *end == '\0') return "; an int must lie in [-2^63, 2^63)";
  } else if (want == ValueType::Float) {
    std::strtod(s.c_str(), &end);
    if (errno == ERANGE && !s.empty() && *end == '\0') return "; a float must lie within ±1.8e308";
  }
  return "";
}

// `v` as type `want` (ints widen to floats). A float must be finite: no key means anything by
// nan or inf, and JSON (the resolved config, run ids) cannot write them (docs/training.md,
// "Validation").
Value coerce(const Value& v, ValueType want, const SourceLocation& where, const std::string& key) {
  if (want == ValueType::Float && type_of(v) == ValueType::Int) {
    return static_cast<double>(std::get<int64_t>(v));
  }
  if (type_of(v) != want) {
    throw InputError(where, key + " must be of type " + type_name(want) + " (got " +
                                type_name(type_of(v)) + " " + to_string(v) + ")" +
                                number_hint(v, want));
  }
  if (want == ValueType::Float && !std::isfinite(std::get<double>(v))) {
    throw InputError(where, key + " = " + to_string(v) + " must be a finite number");
  }
  return v;
}

void resolve_model_preset(RunConfig& cfg, const SourceLocation& where) {
  if (!cfg.model.init_from.empty()) return;  // the folder's config.json gives the shape
  auto it = presets().find(cfg.model.preset);
  if (it == presets().end()) {
    std::vector<std::string> names;
    for (auto& [n, p] : presets()) names.push_back(n);
    throw InputError(where, "model.preset = \"" + cfg.model.preset + "\" is not one of " +
                                join(names) + did_you_mean(cfg.model.preset, names));
  }
  const Preset& p = it->second;
  if (cfg.model.n_layer == 0) cfg.model.n_layer = p.n_layer;
  if (cfg.model.d_model == 0) cfg.model.d_model = p.d_model;
  if (cfg.model.n_head == 0) cfg.model.n_head = p.n_head;
  // One spelling of "no grouping", so that it is one run id.
  if (cfg.model.n_kv_head == cfg.model.n_head) cfg.model.n_kv_head = 0;
  if (cfg.model.d_ffn == 0) {
    // SwiGLU with hidden ratio 4 (8d/3 for equal parameters), rounded up to a multiple of 256 as in
    // the authors' fla configs: 1024 -> 2816, 1536 -> 4096. Saturating: a d_model too large for
    // 8 d_model is refused by the memory check, not wrapped round to a negative width.
    cfg.model.d_ffn = p.d_ffn ? p.d_ffn : (saturating_mul(8, cfg.model.d_model) / 3 + 255) / 256 * 256;
  }
}

}  // namespace

// The one typed reader of resolved parameters (core/config/attention_schema.h).
bool AttentionConfig::get_bool(const std::string& key) const { return param<bool>(params, key); }
int64_t AttentionConfig::get_int(const std::string& key) const { return param<int64_t>(params, key); }
double AttentionConfig::get_float(const std::string& key) const { return param<double>(params, key); }
std::string AttentionConfig::get_string(const std::string& key) const {
  return param<std::string>(params, key);
}

namespace {

InitFromResolver& init_from_resolver() {
  static InitFromResolver resolver;
  return resolver;
}

// What model.init_from's folder sets: written beside it, the key would be overruled or contradict.
const std::vector<std::string>& keys_set_by_init_from() {
  static const std::vector<std::string> keys = {
      "model.preset",   "model.n_layer",        "model.d_model",  "model.n_head",
      "model.n_kv_head", "model.d_ffn",         "model.vocab_size", "model.tie_embeddings",
      "model.norm_eps", "attention.rope_theta", "attention.rope_scaling",
      "attention.rope_scaling_factor", "attention.rope_low_freq_factor",
      "attention.rope_high_freq_factor", "attention.rope_original_max_position_embeddings",
      "eval.bos"};
  return keys;
}

}  // namespace

void register_init_from_resolver(InitFromResolver resolver) {
  init_from_resolver() = std::move(resolver);
}

namespace {

// Reads a parsed TOML table into a RunConfig, remembering where every key and value came from so
// that later checks can point at them.
struct ConfigReader {
  RunConfig cfg;
  std::string source;
  bool json_source = false;  // the table was built from JSON, whose nodes carry no positions
  std::map<std::string, SourceLocation> where;      // dotted key -> its value's position
  std::map<std::string, SourceLocation> key_where;  // dotted key -> the key's position
  ParamMap attention_overrides;

  // Where a node came from. A TOML node without a position was set on the command line: name the
  // --set. JSON keeps no positions at all: name the file and the key.
  SourceLocation location_of(const toml::source_region& src, const std::string& dotted) const {
    if (src.begin.line != 0) return where_of(src, source);
    if (json_source) return {source + ", key " + dotted};
    return {"--set " + dotted};
  }

  void read_section(const toml::key& section_key, const toml::node& section_node) {
    const std::string section(section_key.str());
    const SourceLocation sec_loc = location_of(section_key.source(), section);
    const auto& sections = section_names();
    if (std::find(sections.begin(), sections.end(), section) == sections.end()) {
      throw InputError(sec_loc, "unknown section [" + section + "]" +
                                    did_you_mean(section, sections) +
                                    "; valid sections: " + join(sections));
    }
    const toml::table* sec = section_node.as_table();
    if (!sec) throw InputError(sec_loc, "[" + section + "] must be a table");
    where[section] = sec_loc;
    for (auto& [k, node] : *sec) read_key(section, k, node);
  }

  void read_key(const std::string& section, const toml::key& k, const toml::node& node) {
    const std::string key(k.str());
    const std::string dotted = section + "." + key;
    // Errors about a value point at the value, errors about the key (unknown) at the key.
    const SourceLocation loc = location_of(node.source(), dotted);
    const SourceLocation key_loc = location_of(k.source(), dotted);
    where[dotted] = loc;
    key_where[dotted] = key_loc;
    if (section == "attention") return read_attention(key, node, loc);
    if (dotted == "eval.task_limits") return read_task_limits(node, loc);
    if (dotted == "eval.tasks") return read_tasks(node, loc);
    if (dotted == "eval.contexts") return read_contexts(node, loc);
    const Field* f = find_field(section, key);
    if (!f) {
      auto names = field_names(section);
      throw InputError(key_loc, "unknown key " + dotted + did_you_mean(key, names) +
                                    "; valid keys in [" + section + "]: " + join(names));
    }
    auto v = scalar(node);
    if (!v) throw InputError(loc, dotted + " must be of type " + type_name(f->type) + " (got " +
                                      node_kind(node) + ")");
    f->set(cfg, coerce(*v, f->type, loc, dotted));
  }

  // [attention]: variant and backend are fixed keys; the rest is the variant's, checked against
  // its schema once the variant is known.
  void read_attention(const std::string& key, const toml::node& node, const SourceLocation& loc) {
    const std::string dotted = "attention." + key;
    auto v = scalar(node);
    if (!v) throw InputError(loc, dotted + " must be a scalar (got " + node_kind(node) + ")");
    if (key == "variant" || key == "backend") {
      std::string s = std::get<std::string>(coerce(*v, ValueType::String, loc, dotted));
      (key == "variant" ? cfg.attention.variant : cfg.attention.backend) = s;
    } else {
      attention_overrides[key] = *v;
    }
  }

  void read_task_limits(const toml::node& node, const SourceLocation& loc) {
    const toml::table* lt = node.as_table();
    if (!lt) throw InputError(loc, "eval.task_limits must be a table of task = limit");
    for (auto& [task, n] : *lt) {
      auto v = n.value<int64_t>();
      if (!n.is_integer() || *v < 1) {
        throw InputError(location_of(n.source(), "eval.task_limits." + std::string(task.str())),
                         "eval.task_limits." + std::string(task.str()) + " must be an int >= 1");
      }
      cfg.eval.task_limits[std::string(task.str())] = *v;
    }
  }

  void read_tasks(const toml::node& node, const SourceLocation& loc) {
    const toml::array* arr = node.as_array();
    if (!arr) throw InputError(loc, "eval.tasks must be an array of task names");
    for (auto& t : *arr) {
      if (!t.is_string()) throw InputError(loc, "eval.tasks must be an array of strings");
      cfg.eval.tasks.push_back(t.as_string()->get());
    }
  }

  void read_contexts(const toml::node& node, const SourceLocation& loc) {
    const toml::array* arr = node.as_array();
    if (!arr) throw InputError(loc, "eval.contexts must be an array of lengths in tokens");
    for (auto& n : *arr) {
      if (!n.is_integer() || *n.value<int64_t>() < 1) {
        throw InputError(loc, "eval.contexts must be an array of ints >= 1 (tokens)");
      }
      cfg.eval.contexts.push_back(*n.value<int64_t>());
    }
  }

  // Where to point an error about `dotted`: its value, else its section, else the file.
  SourceLocation loc_of(const std::string& dotted) const {
    if (auto it = where.find(dotted); it != where.end()) return it->second;
    if (auto it = where.find(dotted.substr(0, dotted.find('.'))); it != where.end()) {
      return it->second;
    }
    return SourceLocation{source};
  }

  // Presets, the backend, the variant's parameters, every field's check, the variant's checks.
  void resolve_and_check() {
    resolve_model_preset(cfg, loc_of("model.preset"));
    try {
      check_backend(cfg.attention.backend);
    } catch (const UsageError& e) {
      throw InputError(loc_of("attention.backend"), e.what());
    }
    cfg.attention.params = resolve_params(cfg.attention.variant, attention_overrides,
                                          [&](const std::string& key) {
                                            // Attention messages name the key: point at it.
                                            auto it = key_where.find("attention." + key);
                                            return it != key_where.end() ? it->second
                                                                         : loc_of("attention");
                                          });
    if (!cfg.model.init_from.empty() && !json_source) resolve_init_from();
    for (auto& f : fields()) {
      if (!f.check) continue;
      std::string problem = f.check(cfg);
      if (!problem.empty()) {
        std::string dotted = f.section + "." + f.name;
        throw InputError(loc_of(dotted), dotted + " " + problem);
      }
    }
    // The variant's own checks of the whole config (e.g. RoPE needs an even head dimension).
    if (auto problem = check_variant(cfg.model, cfg.attention)) {
      throw InputError(loc_of(problem->key), problem->message);
    }
    if (auto problem = check_memory(cfg, "")) {  // training checks its own device (preflight)
      throw InputError(loc_of(problem->key), problem->message);
    }
    cap_threads();
  }

  // model.init_from: the folder's resolver (registered by the model layer) completes the config. A
  // resolved JSON config has it complete already, and is read without the folder.
  void resolve_init_from() {
    for (const std::string& key : keys_set_by_init_from()) {
      auto it = key_where.find(key);
      if (it == key_where.end()) continue;
      throw InputError(it->second, key + " is set by model.init_from (" + cfg.model.init_from +
                                       "/config.json); remove it");
    }
    if (!init_from_resolver()) {
      throw InputError(loc_of("model.init_from"),
                       "model.init_from: this program cannot read pretrained models");
    }
    try {
      init_from_resolver()(cfg);
    } catch (const InputError&) {
      throw;
    } catch (const UsageError& e) {
      throw InputError(loc_of("model.init_from"), std::string("model.init_from: ") + e.what());
    }
  }

  // More intra-op threads than cores only slows a run down (100000 would take minutes to start):
  // capped with a warning, once per value. train.threads is execution-only, so the run id stays.
  void cap_threads() {
    const auto cores = static_cast<int64_t>(std::thread::hardware_concurrency());
    if (cores <= 0 || cfg.train.threads <= cores) return;
    static std::mutex mutex;  // sweeps resolve cells in parallel
    static std::set<int64_t> warned;
    std::lock_guard<std::mutex> lock(mutex);
    if (warned.insert(cfg.train.threads).second) {
      fmt::print(stderr, "warning: {}: train.threads = {} is more than this machine's {} cores; "
                         "using {}\n",
                 loc_of("train.threads").str(), cfg.train.threads, cores, cores);
    }
    cfg.train.threads = cores;
  }
};

RunConfig resolve_table(const toml::table& table, const std::string& source, bool json_source) {
  ConfigReader r;
  r.cfg.source = source;
  r.source = source;
  r.json_source = json_source;
  for (auto& [section_key, section_node] : table) r.read_section(section_key, section_node);
  r.resolve_and_check();
  return r.cfg;
}

// JSON as TOML, so that a JSON config is validated exactly like a TOML file. Values keep their
// JSON types (1 is an int, 1.0 a float; ints are accepted for floats as in TOML).
toml::table json_table(const json& j, const std::string& prefix, const std::string& source);
toml::array json_array(const json& j, const std::string& dotted, const std::string& source);

// Calls `put` with `v` as a TOML node. JSON null has no TOML counterpart: an error naming the key.
template <typename Put>
void put_json(const json& v, const std::string& dotted, const std::string& source, Put&& put) {
  const SourceLocation where{source + ", key " + dotted};
  switch (v.type()) {
    case json::value_t::object: return put(json_table(v, dotted + ".", source));
    case json::value_t::array: return put(json_array(v, dotted, source));
    case json::value_t::boolean: return put(v.get<bool>());
    case json::value_t::number_integer: return put(v.get<int64_t>());
    case json::value_t::number_unsigned:
      if (v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
        throw InputError(where, dotted + " = " + v.dump() + " is too large for a 64-bit int");
      }
      return put(static_cast<int64_t>(v.get<uint64_t>()));
    case json::value_t::number_float: return put(v.get<double>());
    case json::value_t::string: return put(v.get<std::string>());
    default:
      throw InputError(where, dotted + " is " + std::string(v.type_name()) +
                                  "; a run config needs a value (or leave the key out for its "
                                  "default)");
  }
}

toml::table json_table(const json& j, const std::string& prefix, const std::string& source) {
  toml::table t;
  for (auto& [k, v] : j.items()) {
    const std::string& key = k;  // a lambda may capture a structured binding from C++20 only
    put_json(v, prefix + key, source, [&](auto&& node) { t.insert(key, std::move(node)); });
  }
  return t;
}

toml::array json_array(const json& j, const std::string& dotted, const std::string& source) {
  toml::array a;
  for (auto& x : j) put_json(x, dotted, source, [&](auto&& node) { a.push_back(std::move(node)); });
  return a;
}

// The parse error's position as line and column (nlohmann reports the byte offset).
SourceLocation json_error_location(const std::string& text, size_t byte, const std::string& source) {
  SourceLocation loc{source, 1, 1};
  for (size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') loc.line++, loc.column = 1;
    else loc.column++;
  }
  return loc;
}

}  // namespace

RunConfig resolve_run_config(const toml::table& table, const std::string& source) {
  return resolve_table(table, source, /*from_json=*/false);
}

void apply_override(toml::table& table, const std::string& assignment) {
  const Assignment a = parse_assignment(assignment);
  try {
    assign_dotted(table, a.key, a.value());
  } catch (const UsageError& e) {
    throw InputError({"--set " + assignment}, e.what());
  }
}

RunConfig parse_run_config(const std::string& text, const std::string& source,
                           const std::vector<std::string>& sets) {
  check_toml_depth(text, source);
  toml::table table;
  try {
    table = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw InputError({source, static_cast<int>(b.line), static_cast<int>(b.column)},
                     std::string("invalid TOML: ") + std::string(e.description()));
  }
  for (auto& s : sets) apply_override(table, s);
  return resolve_run_config(table, source);
}

RunConfig parse_json_run_config(const std::string& text, const std::string& source) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 2, column 23: syntax error ...": the
    // position is in the location already.
    std::string what = e.what();
    if (auto colon = what.find(": "); colon != std::string::npos) what = what.substr(colon + 2);
    throw InputError(json_error_location(text, e.byte, source), "invalid JSON: " + what);
  } catch (const json::exception& e) {
    // E.g. out_of_range.406 "number overflow parsing '1e309'": no position, the file and the text.
    std::string what = e.what();
    if (auto bracket = what.find("] "); bracket != std::string::npos) what = what.substr(bracket + 2);
    throw InputError({source}, "invalid JSON: " + what);
  }
  return from_json(j, source);
}

RunConfig load_run_config(const std::filesystem::path& file, const std::vector<std::string>& sets) {
  const std::string text = read_regular_file(file, "config");  // a FIFO would block (regular_file.h)
  if (file.extension() != ".json") return parse_run_config(text, file.string(), sets);
  if (!sets.empty()) {
    // A resolved config has the preset's sizes and every parameter of its variant written out, so
    // an override of model.preset or attention.variant would silently not mean what it says.
    throw UsageError("--set " + sets.front() + ": overrides apply to TOML configs only; " +
                     file.string() + " is a resolved JSON config (every default and the preset's "
                     "sizes written out), so edit a copy of it instead");
  }
  return parse_json_run_config(text, file.string());
}

namespace {
// JSON writes nan and inf as null, which reads back as the key's default: two configs would share
// one text and one run id. Validation refuses them; a config built in code with one is refused here.
json value_json(const Value& v, const std::string& dotted, const RunConfig& cfg) {
  if (const double* x = std::get_if<double>(&v); x && !std::isfinite(*x)) {
    throw InputError({cfg.source.empty() ? "run config" : cfg.source},
                     dotted + " = " + to_string(v) + " must be a finite number (JSON cannot "
                     "hold it, and the run id would not tell it from the default)");
  }
  return std::visit([](auto&& x) { return json(x); }, v);
}
}  // namespace

json to_json(const RunConfig& cfg) {
  json j = json::object();
  for (auto& f : fields()) j[f.section][f.name] = value_json(f.get(cfg), f.section + "." + f.name, cfg);
  j["eval"]["tasks"] = cfg.eval.tasks;
  j["eval"]["task_limits"] = cfg.eval.task_limits;
  j["eval"]["contexts"] = cfg.eval.contexts;
  json a = json::object();
  a["variant"] = cfg.attention.variant;
  a["backend"] = cfg.attention.backend;
  for (auto& [k, v] : cfg.attention.params) a[k] = value_json(v, "attention." + k, cfg);
  j["attention"] = a;
  return j;  // nlohmann::json objects keep keys sorted: the dump is canonical
}

std::string canonical_json(const RunConfig& cfg) { return to_json(cfg).dump(); }

RunConfig from_json(const json& j, const std::string& source) {
  if (!j.is_object()) {
    throw InputError({source}, std::string("a JSON run config must be an object of sections "
                                           "(model, attention, data, train, eval), not ") +
                                   j.type_name());
  }
  // Rebuilt through the TOML path so that a stored config is validated exactly like a file.
  return resolve_table(json_table(j, "", source), source, /*from_json=*/true);
}

std::string config_hash(const RunConfig& cfg) {
  json j = to_json(cfg);
  j.erase("eval");  // evaluation settings never change the trained model
  for (auto& dotted : execution_only_keys()) {
    auto dot = dotted.find('.');
    j[dotted.substr(0, dot)].erase(dotted.substr(dot + 1));
  }
  static const json defaults = to_json(RunConfig{});
  for (auto& dotted : hashed_unless_default_keys()) {
    auto dot = dotted.find('.');
    const std::string section = dotted.substr(0, dot), key = dotted.substr(dot + 1);
    if (j[section][key] == defaults[section][key]) j[section].erase(key);
  }
  std::string text = j.dump();
  return fmt::format("{:016x}", XXH3_64bits(text.data(), text.size())).substr(0, 12);
}

std::vector<std::pair<std::string, Value>> flatten(const RunConfig& cfg) {
  std::vector<std::pair<std::string, Value>> out;
  for (auto& f : fields()) out.emplace_back(f.section + "." + f.name, f.get(cfg));
  out.emplace_back("attention.variant", cfg.attention.variant);
  out.emplace_back("attention.backend", cfg.attention.backend);
  for (auto& [k, v] : cfg.attention.params) out.emplace_back("attention." + k, v);
  std::string tasks;
  for (size_t i = 0; i < cfg.eval.tasks.size(); ++i) tasks += (i ? "," : "") + cfg.eval.tasks[i];
  out.emplace_back("eval.tasks", tasks);
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.first < b.first; });
  return out;
}

std::vector<std::pair<std::string, Value>> identity_keys(const RunConfig& cfg) {
  std::vector<std::pair<std::string, Value>> out;
  for (auto& [name, value] : flatten(cfg))
    if (name.rfind("eval.", 0) != 0 && !execution_only_keys().count(name))
      out.emplace_back(name, value);
  return out;
}

const std::vector<std::string>& attention_backends() {
  static const std::vector<std::string> names = {"auto", "eager", "fused"};
  return names;
}

void check_backend(const std::string& backend) {
  const auto& names = attention_backends();
  if (std::find(names.begin(), names.end(), backend) != names.end()) return;
  throw UsageError("attention.backend = \"" + backend + "\" is not one of " + join(names) +
                   did_you_mean(backend, names));
}

}  // namespace attnbench::config
