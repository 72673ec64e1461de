#include "model/pretrained/hf_config.h"

#include <cmath>
#include <fstream>

#include "core/common/error.h"
#include "core/common/json_input.h"
#include "model/pretrained/transformers_keys.h"

namespace attnbench::model::pretrained {

namespace {

// Keys of every transformers config that do not change the forward pass in evaluation: the class
// and library bookkeeping, dropouts (off in eval), the output switches, the cache switch, how
// attention is computed (eager, sdpa and flash compute the same softmax), training switches, and
// generation's token ids (read by the tokenizer side where they matter).
const std::set<std::string>& common_keys() {
  static const std::set<std::string> keys = {"architectures",
                                             "model_type",
                                             "transformers_version",
                                             "torch_dtype",
                                             "dtype",
                                             "_name_or_path",
                                             "name_or_path",
                                             "use_cache",
                                             "bos_token_id",
                                             "eos_token_id",
                                             "pad_token_id",
                                             "initializer_range",
                                             "attention_dropout",
                                             "hidden_dropout",
                                             "output_attentions",
                                             "output_hidden_states",
                                             "return_dict",
                                             "is_decoder",
                                             "is_encoder_decoder",
                                             "id2label",
                                             "label2id",
                                             "num_labels",
                                             "problem_type",
                                             "tokenizer_class",
                                             "prefix",
                                             "sep_token_id",
                                             "decoder_start_token_id",
                                             "task_specific_params",
                                             "finetuning_task",
                                             "chunk_size_feed_forward",
                                             "add_cross_attention",
                                             "tie_encoder_decoder",
                                             "cross_attention_hidden_size",
                                             "classifier_dropout",
                                             "torchscript",
                                             "use_bfloat16",
                                             "tf_legacy_loss",
                                             "gradient_checkpointing",
                                             "_attn_implementation",
                                             "_attn_implementation_autoset",
                                             "attn_implementation",
                                             "xla_device"};
  return keys;
}

// "gemma2, gemma3, ..." as a phrase: "*" is PreTrainedConfig, which every model shares.
std::string readers_phrase(const std::string& readers) {
  if (readers.rfind("*", 0) != 0) return "transformers' " + readers + " models read this key";
  return "transformers reads this key for every model (PreTrainedConfig)";
}

// A value in a message: a scalar as JSON (escaped, cut after 80 bytes), an object or array by its
// kind: never a dump of the input, which may be megabytes.
std::string show(const nlohmann::json& v) {
  if (v.is_object() || v.is_array()) return describe_json(v);
  const std::string text = v.dump();
  return text.size() <= 80 ? text : text.substr(0, 80) + "...";
}

}  // namespace

HFConfig::HFConfig(nlohmann::json json, std::filesystem::path file)
    : json_(std::move(json)), file_(std::move(file)) {}

HFConfig HFConfig::read(const std::filesystem::path& file) {
  // config.json files are a few KB; 16 MiB leaves room for long task_specific_params.
  JsonLimits limits;
  limits.max_bytes = 16u << 20;
  nlohmann::json json = read_json_input(file, "the file", limits);
  if (!json.is_object()) {
    throw UsageError(file.string() + ": not a JSON object (expected a Hugging Face config.json)");
  }
  return HFConfig(std::move(json), file);
}

bool HFConfig::has(const std::string& key) const {
  auto it = json_.find(key);
  return it != json_.end() && !it->is_null();
}

const nlohmann::json& HFConfig::at(const std::string& key) const {
  read_.insert(key);
  return json_.at(key);
}

int64_t HFConfig::integer(const std::string& key) const {
  if (!has(key))
    throw UsageError(file_.string() + ": " + key + " is missing (expected an integer)");
  const nlohmann::json& v = at(key);
  if (!v.is_number_integer()) refuse(key, "expected an integer");
  return v.get<int64_t>();
}

int64_t HFConfig::integer(const std::string& key, int64_t fallback) const {
  read_.insert(key);
  return has(key) ? integer(key) : fallback;
}

int64_t HFConfig::size(const std::string& key) const {
  const int64_t v = integer(key);
  if (v < 1) refuse(key, "expected a positive integer");
  return v;
}

int64_t HFConfig::size(const std::string& key, int64_t fallback) const {
  read_.insert(key);
  if (has(key)) return size(key);
  if (fallback < 1) {
    refuse(key,
           "expected a positive integer; the default it takes here is " + std::to_string(fallback));
  }
  return fallback;
}

double HFConfig::positive(const std::string& key, double fallback) const {
  const double v = number(key, fallback);
  if (!(std::isfinite(v) && v > 0)) refuse(key, "expected a finite number above 0");
  return v;
}

double HFConfig::number(const std::string& key, double fallback) const {
  read_.insert(key);
  if (!has(key)) return fallback;
  const nlohmann::json& v = at(key);
  if (!v.is_number()) refuse(key, "expected a number");
  return v.get<double>();
}

bool HFConfig::boolean(const std::string& key, bool fallback) const {
  read_.insert(key);
  if (!has(key)) return fallback;
  const nlohmann::json& v = at(key);
  if (!v.is_boolean()) refuse(key, "expected true or false");
  return v.get<bool>();
}

std::string HFConfig::string(const std::string& key, const std::string& fallback) const {
  read_.insert(key);
  if (!has(key)) return fallback;
  const nlohmann::json& v = at(key);
  if (!v.is_string()) refuse(key, "expected a string");
  return v.get<std::string>();
}

std::optional<nlohmann::json> HFConfig::object(const std::string& key) const {
  read_.insert(key);
  if (!has(key)) return std::nullopt;
  const nlohmann::json& v = at(key);
  if (!v.is_object()) refuse(key, "expected an object");
  return v;
}

std::optional<nlohmann::json> HFConfig::array(const std::string& key) const {
  read_.insert(key);
  if (!has(key)) return std::nullopt;
  const nlohmann::json& v = at(key);
  if (!v.is_array()) refuse(key, "expected an array");
  return v;
}

void HFConfig::ignore(const std::vector<std::string>& keys) const {
  read_.insert(keys.begin(), keys.end());
}

void HFConfig::refuse(const std::string& key, const std::string& why) const {
  const auto it = json_.find(key);
  const std::string value = it == json_.end() ? "(absent)" : show(*it);
  // The key as JSON writes it (escaped, unquoted), cut like the value: it can be megabytes long.
  const std::string escaped = nlohmann::json(key).dump();
  const std::string name = escaped.substr(1, escaped.size() - 2);
  throw UsageError(file_.string() + ": " + (name.size() <= 80 ? name : name.substr(0, 80) + "...") +
                   " = " + value + ": " + why);
}

void HFConfig::finish() const {
  const auto type = json_.find("model_type");
  const std::string model_type =
      type != json_.end() && type->is_string() ? type->get<std::string>() : "this architecture";
  for (const auto& [key, value] : json_.items()) {
    // null is transformers' "not set": the architecture's default, which is what runs here.
    if (value.is_null() || read_.count(key)) continue;
    // Pruning removes heads: an empty map (what configs carry) prunes nothing.
    if (key == "pruned_heads" && value.empty()) continue;
    if (key != "pruned_heads" && common_keys().count(key)) continue;
    const std::optional<std::string> readers = transformers_readers(key);
    if (!readers) continue;  // no transformers model reads it: it changes nothing there either
    refuse(key, readers_phrase(*readers) + ", and attnbench's " + model_type +
                    " does not compute it: the model is refused rather than the key ignored "
                    "(docs/pretrained.md, \"Which config.json keys are read\")");
  }
}

}  // namespace attnbench::model::pretrained
