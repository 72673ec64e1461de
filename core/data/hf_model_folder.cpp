#include "core/data/hf_model_folder.h"

#include <nlohmann/json.hpp>

#include "core/common/json_input.h"

namespace attnbench::data {

bool is_hf_model_folder(const std::filesystem::path& dir) {
  const std::filesystem::path config = dir / "config.json";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(config, ec)) return false;
  JsonLimits limits;
  limits.max_bytes = 16u << 20;  // as HFConfig reads it
  const nlohmann::json j = read_json_input(config, "the file", limits);
  return j.is_object() && j.contains("model_type");
}

std::string model_folder_name(const std::filesystem::path& dir) {
  const std::filesystem::path folder = std::filesystem::absolute(dir).lexically_normal();
  return (folder.filename().empty() ? folder.parent_path() : folder).filename().string();
}

}  // namespace attnbench::data
