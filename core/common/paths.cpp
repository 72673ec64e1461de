#include "core/common/paths.h"

#include <cstdlib>

#include "core/common/error.h"

namespace attnbench {

std::filesystem::path data_root(const std::string& cli_data_dir) {
  if (!cli_data_dir.empty()) return cli_data_dir;
  if (const char* env = std::getenv("ATTNBENCH_DATA"); env && *env) return env;
  return "data";
}

bool data_root_is_explicit(const std::string& cli_data_dir) {
  const char* env = std::getenv("ATTNBENCH_DATA");
  return !cli_data_dir.empty() || (env && *env);
}

std::filesystem::path require_data_file(const std::string& relative,
                                        const std::string& cli_data_dir) {
  auto root = data_root(cli_data_dir);
  auto p = root / relative;
  if (!std::filesystem::exists(p)) {
    throw UsageError("missing data file " + p.string() + "\n  expected layout: <data root>/" +
                     relative + " (data root = --data-dir, else $ATTNBENCH_DATA, else ./data)" +
                     "\n  get it with: attnbench data fetch --out " + root.string());
  }
  return p;
}

std::string absolute_path(const std::filesystem::path& p) {
  return std::filesystem::absolute(p).lexically_normal().string();
}

}  // namespace attnbench
