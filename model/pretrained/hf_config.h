// A Hugging Face config.json read key by key (docs/pretrained.md, "Which config.json keys are
// read"): every key an architecture reads is marked, and finish() refuses any key left over that some
// transformers model reads (model/pretrained/transformers_keys.h) unless it is known to leave
// evaluation unchanged (dropouts, training and generation settings, bookkeeping). A key no
// transformers model knows is accepted: it cannot change what transformers computes. Each refusal
// is a UsageError naming the file and the key.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace attnbench::model::pretrained {

class HFConfig {
 public:
  HFConfig(nlohmann::json json, std::filesystem::path file);
  static HFConfig read(const std::filesystem::path& file);  // UsageError if absent or not a JSON object

  bool has(const std::string& key) const;  // present and not null
  int64_t integer(const std::string& key) const;  // required
  int64_t integer(const std::string& key, int64_t fallback) const;
  // A size: a required integer >= 1, refused otherwise before anything divides by it or allocates.
  int64_t size(const std::string& key) const;
  int64_t size(const std::string& key, int64_t fallback) const;
  // A finite number > 0 (a RoPE base, a norm epsilon, a scaling factor).
  double positive(const std::string& key, double fallback) const;
  double number(const std::string& key, double fallback) const;
  bool boolean(const std::string& key, bool fallback) const;
  std::string string(const std::string& key, const std::string& fallback) const;
  // An object (e.g. rope_scaling), or nullopt when absent or null; marked as read.
  std::optional<nlohmann::json> object(const std::string& key) const;
  std::optional<nlohmann::json> array(const std::string& key) const;  // the same for an array
  // Marks keys as read without reading them: they do not change the computation.
  void ignore(const std::vector<std::string>& keys) const;

  // A UsageError "<file>: <key> = <value>: <why>".
  [[noreturn]] void refuse(const std::string& key, const std::string& why) const;
  // Refuses the first key that transformers knows and that was neither read nor ignored (nor one of
  // the keys every config carries that leave evaluation unchanged, nor null: not set).
  void finish() const;

  const std::filesystem::path& file() const { return file_; }
  // The whole config, canonical: nlohmann's dump sorts keys and drops whitespace.
  std::string canonical() const { return json_.dump(); }

 private:
  const nlohmann::json& at(const std::string& key) const;  // marks it
  nlohmann::json json_;
  std::filesystem::path file_;
  mutable std::set<std::string> read_;
};

}  // namespace attnbench::model::pretrained
