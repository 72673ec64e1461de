// The Hugging Face model fixtures (tests/fixtures/hf, written by scripts/make-hf-fixtures; their
// README says what each holds) as the tests read them: the folder, a JSON file, an expected tensor.
#pragma once
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "core/data/safetensors.h"

namespace attnbench::testing {

inline const std::filesystem::path& hf_fixtures() {
  static const std::filesystem::path dir =
      std::filesystem::path(ATTNBENCH_SOURCE_DIR) / "tests" / "fixtures" / "hf";
  return dir;
}

inline nlohmann::json read_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  return nlohmann::json::parse(in);
}

// The tensor `name` of an expected.safetensors, widened to float32.
inline torch::Tensor fixture_tensor(const data::SafetensorsFile& file, const std::string& name) {
  const data::SafetensorsTensor* t = file.find(name);
  if (!t) throw std::runtime_error(file.path().string() + " has no tensor " + name);
  torch::Tensor out = torch::empty(t->shape, torch::kFloat32);
  data::to_float32(*t, out.data_ptr<float>());
  return out;
}

}  // namespace attnbench::testing
