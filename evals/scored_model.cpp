#include "evals/scored_model.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/common/sha256.h"
#include "core/data/hf_model_folder.h"
#include "core/data/hf_tokenizer.h"
#include "core/data/tokenizer.h"
#include "model/checkpoint_model.h"
#include "model/finite.h"
#include "model/pretrained/hf_folder.h"

namespace attnbench::evals {

namespace fs = std::filesystem;

namespace {

ScoredModel load_trained(const fs::path& dir, const std::string& device,
                         const std::string& device_key, const std::string& data_dir) {
  model::LoadedModel loaded = model::load_model(dir, device, device_key);
  ScoredModel m;
  m.model = loaded.model.ptr();
  m.device = loaded.device;
  m.source = loaded.checkpoint;
  m.step = loaded.step;
  m.run_id = config::config_hash(loaded.cfg);
  m.options = eval_options(loaded.cfg.eval);
  if (!loaded.cfg.model.init_from.empty()) {
    // Text is tokens only in the tokenizer the run trained on: a tokenizer.json replaced since
    // would score (and store under the run's id) another model's numbers.
    const fs::path tokenizer = fs::path(loaded.cfg.model.init_from) / "tokenizer.json";
    const std::string now = sha256_file(tokenizer);
    if (!loaded.init_from_tokenizer_sha256.empty() && now != loaded.init_from_tokenizer_sha256) {
      throw UsageError(tokenizer.string() + " (sha256 " + now.substr(0, 12) + ") is not the " +
                       "tokenizer the run " + loaded.checkpoint.string() + " trained with (sha256 " +
                       loaded.init_from_tokenizer_sha256.substr(0, 12) + "): restore it, or " +
                       "continue the model again in a new run");
    }
    // Its eval.bos was set from the same tokenizer when the config was resolved
    // (model/pretrained/init_from.h); lm-eval's prefix token is that tokenizer's too.
    m.tokenizer_ = run_tokenizer(loaded.cfg, data_dir);
    m.options.prefix_token = m.tokenizer_->prefix_id();
  }
  m.cfg = std::move(loaded.cfg);
  m.data_dir = data_dir;
  return m;
}

ScoredModel load_imported(const fs::path& dir, const std::string& device,
                          const std::string& device_key) {
  // The tokenizer first: a bad tokenizer.json is refused before the weights are read.
  auto tokenizer = std::make_shared<const data::HFTokenizer>(data::HFTokenizer::load(dir));
  model::pretrained::PretrainedModel loaded = model::pretrained::load_pretrained(dir, device, device_key);
  ScoredModel m;
  m.model = loaded.model.ptr();
  m.device = loaded.device;
  m.source = dir;
  PretrainedIdentity id;
  id.family = loaded.model->config().model_type;
  id.name = loaded.name;
  id.weights_sha256 = loaded.weights_sha256;
  id.config_json = loaded.config_json;
  id.tokenizer_sha256 = sha256_file(dir / "tokenizer.json");
  m.pretrained = id;
  m.run_id = sha256_hex(m.config_json()).substr(0, 12);
  // lm-eval's HF backend with add_bos_token unset: the tokenizer's default (tokenizer.adds_bos()).
  m.options.bos = tokenizer->adds_bos() ? BosPolicy::Prepend : BosPolicy::None;
  m.options.prefix_token = tokenizer->prefix_id();
  m.tokenizer_ = std::move(tokenizer);
  return m;
}

}  // namespace

std::shared_ptr<const data::TextTokenizer> run_tokenizer(const config::RunConfig& cfg,
                                                         const std::string& data_dir) {
  if (cfg.model.init_from.empty()) {
    return data::gpt2_text_tokenizer(data::gpt2_tokenizer_dir(data_dir));
  }
  return std::make_shared<const data::HFTokenizer>(data::HFTokenizer::load(cfg.model.init_from));
}

const data::TextTokenizer& ScoredModel::tokenizer() const {
  if (!tokenizer_) tokenizer_ = run_tokenizer(cfg ? *cfg : config::RunConfig{}, data_dir);
  return *tokenizer_;
}

std::string ScoredModel::config_json() const {
  if (cfg) return config::canonical_json(*cfg);
  nlohmann::json j;
  j["pretrained"] = {{"family", pretrained->family},
                     {"name", pretrained->name},
                     {"weights_sha256", pretrained->weights_sha256}};
  j["config"] = nlohmann::json::parse(pretrained->config_json);
  return j.dump();
}

std::vector<results::Param> ScoredModel::params() const {
  std::vector<results::Param> out;
  if (cfg) {
    for (const auto& [key, value] : config::flatten(*cfg)) {
      out.push_back({key, config::to_string(value), config::type_name(config::type_of(value))});
    }
    return out;
  }
  const model::LMShape s = model->shape();
  out.push_back({"pretrained.family", pretrained->family, "string"});
  out.push_back({"pretrained.name", pretrained->name, "string"});
  out.push_back({"pretrained.weights_sha256", pretrained->weights_sha256, "string"});
  out.push_back({"pretrained.tokenizer_sha256", pretrained->tokenizer_sha256, "string"});
  out.push_back({"model.n_layer", std::to_string(s.n_layer), "int"});
  out.push_back({"model.n_head", std::to_string(s.n_head), "int"});
  out.push_back({"model.context_length", std::to_string(s.context_length), "int"});
  out.push_back({"model.vocab_size", std::to_string(s.vocab_size), "int"});
  return out;
}

void check_stored_tokenizer(results::Store& store, const ScoredModel& m) {
  if (!m.pretrained) return;
  for (const results::Param& p : store.params(m.run_id)) {
    if (p.key != "pretrained.tokenizer_sha256" || p.value == m.pretrained->tokenizer_sha256) continue;
    throw UsageError((m.source / "tokenizer.json").string() + " (sha256 " +
                     m.pretrained->tokenizer_sha256.substr(0, 12) + ") is not the tokenizer run " +
                     m.run_id + " was scored with (sha256 " + p.value.substr(0, 12) +
                     "): its stored scores are of that one; restore it, or score into another "
                     "database");
  }
}

ScoredModel load_scored_model(const fs::path& dir, const std::string& device,
                              const std::string& device_key, const std::string& data_dir) {
  ScoredModel m;
  if (data::is_hf_model_folder(dir)) {
    m = load_imported(dir, device, device_key);
    m.data_dir = data_dir;  // GPT-2's tokenizer, to read shards as text (diagnostics/text_source.h)
  } else {
    m = load_trained(dir, device, device_key, data_dir);
  }
  model::require_finite_model(*m.model, m.source.string());
  return m;
}

void require_text(const ScoredModel& m, const std::string& command) {
  const int64_t rows = m.model->shape().vocab_size;
  if (m.cfg && m.cfg->model.init_from.empty()) {  // GPT-2's vocabulary, without its files
    const int64_t gpt2 = int64_t{data::Tokenizer::kEndOfText} + 1;
    if (rows >= gpt2) return;
    throw UsageError(fmt::format("{}: the checkpoint's model.vocab_size = {} is smaller than the "
                                 "GPT-2 tokenizer's {}; it cannot read text (train on GPT-2 tokens "
                                 "to evaluate on text)",
                                 command, rows, gpt2));
  }
  const int64_t tokens = static_cast<int64_t>(m.tokenizer().vocab_size());
  if (rows >= tokens) return;
  throw UsageError(fmt::format("{}: {}/config.json: vocab_size = {} is smaller than its "
                               "tokenizer's {} tokens",
                               command, m.source.string(), rows, tokens));
}

}  // namespace attnbench::evals
