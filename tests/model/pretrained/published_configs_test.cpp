// The config.json files popular checkpoints publish (tests/fixtures/hf/published, each with its
// source in that folder's README.md) and the same files re-saved by two transformers versions
// (tests/fixtures/hf/resaved/<version>), as a fine-tune saved with that version carries them. Each is
// put in a folder beside weights of zeros at the published checkpoint's tensor names, shapes and
// dtype (tensors.json), written sparse so that a 7B model costs no disk, and must load: checked
// against its weights without reading them (check_pretrained), and loaded whole when small.
#include <catch2/catch.hpp>
#include <torch/torch.h>

#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <unistd.h>

#include "core/common/error.h"
#include "model/pretrained/hf_folder.h"
#include "tests/hf_fixtures.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace published_configs_test {

using namespace attnbench;
using namespace attnbench::model::pretrained;
namespace fs = std::filesystem;

namespace {

const fs::path& kFixtures = testing::hf_fixtures();

int64_t item_bytes(const std::string& dtype) {
  if (dtype == "F32") return 4;
  if (dtype == "F16" || dtype == "BF16") return 2;
  if (dtype == "U8" || dtype == "BOOL") return 1;
  throw std::invalid_argument("dtype " + dtype);
}

// A safetensors file of zeros: the header names every tensor of tensors.json ("tensors": {name:
// shape}, in "dtype" unless "dtypes" names another, as GPT-NeoX's U8 masks), the data region is a
// hole (the file is extended, never written). Returns the number of elements.
int64_t write_sparse_safetensors(const fs::path& file, const nlohmann::json& spec) {
  nlohmann::json header = nlohmann::json::object();
  const nlohmann::json dtypes = spec.value("dtypes", nlohmann::json::object());
  int64_t offset = 0, parameters = 0;
  for (const auto& [name, shape] : spec.at("tensors").items()) {  // sorted by name
    const std::string dtype = dtypes.value(name, spec.at("dtype").get<std::string>());
    int64_t n = 1;
    for (const auto& d : shape) n *= d.get<int64_t>();
    const int64_t bytes = n * item_bytes(dtype);
    header[name] = {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    parameters += n;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the format's usual padding
  {
    std::ofstream out(file, std::ios::binary);
    const uint64_t n = text.size();
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
    out << text;
  }
  fs::resize_file(file, 8 + text.size() + static_cast<uint64_t>(offset));
  return parameters;
}

struct Folder {
  fs::path dir;
  int64_t parameters = 0;
  ~Folder() { fs::remove_all(dir); }
};

// config.json as given, beside the zero weights of `model` (a folder of published/).
std::unique_ptr<Folder> build_folder(const fs::path& config, const std::string& model) {
  auto f = std::make_unique<Folder>();
  f->dir = fs::temp_directory_path() / ("ab_published_" + std::to_string(::getpid()) + "_" +
                                        config.parent_path().filename().string());
  fs::remove_all(f->dir);
  fs::create_directories(f->dir);
  fs::copy_file(config, f->dir / "config.json");
  f->parameters = write_sparse_safetensors(
      f->dir / "model.safetensors",
      testing::read_json(kFixtures / "published" / model / "tensors.json"));
  return f;
}

std::vector<std::string> published_models() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(kFixtures / "published")) {
    if (fs::exists(e.path() / "config.json")) out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Loads the folder: the checks without reading, then, for a model small enough to hold here, the
// weights themselves and one forward pass.
void loads(const Folder& f) {
  const ArchitectureConfig a = check_pretrained(f.dir);
  CATCH_CHECK(a.n_layer > 0);
  if (f.parameters > 200'000'000) return;
  PretrainedModel m = load_pretrained(f.dir);
  CATCH_CHECK(m.model->shape().n_layer == a.n_layer);
  torch::NoGradGuard no_grad;
  const torch::Tensor logits = m.model->head(m.model->hidden(torch::tensor({{1, 2, 3}})));
  CATCH_CHECK(logits.size(-1) >= a.vocab_size);
}

}  // namespace

CATCH_TEST_CASE("every published config.json loads with weights at its checkpoint's real shapes") {
  const std::vector<std::string> models = published_models();
  CATCH_REQUIRE(models.size() >= 15);
  std::set<std::string> families;
  for (const std::string& model : models) {
    CATCH_INFO("published/" << model);
    const auto folder = build_folder(kFixtures / "published" / model / "config.json", model);
    try {
      loads(*folder);
    } catch (const UsageError& e) {
      CATCH_FAIL(e.what());
    }
    families.insert(
        testing::read_json(folder->dir / "config.json").at("model_type").get<std::string>());
  }
  CATCH_CHECK(families ==
              std::set<std::string>{"gpt2", "gpt_neox", "llama", "mistral", "opt", "qwen2"});
}

CATCH_TEST_CASE("every published config.json re-saved by two transformers versions loads") {
  std::set<std::string> versions;
  int64_t configs = 0;
  for (const auto& version : fs::directory_iterator(kFixtures / "resaved")) {
    versions.insert(version.path().filename().string());
    for (const auto& e : fs::directory_iterator(version.path())) {
      if (!fs::exists(e.path() / "config.json")) continue;
      const std::string model = e.path().filename().string();
      CATCH_INFO("resaved/" << version.path().filename().string() << "/" << model);
      const auto folder = build_folder(e.path() / "config.json", model);
      try {
        CATCH_CHECK(check_pretrained(folder->dir).n_layer > 0);
      } catch (const UsageError& err) {
        CATCH_FAIL(err.what());
      }
      ++configs;
    }
  }
  CATCH_CHECK(versions.size() >= 2);
  CATCH_CHECK(configs >= 30);
}

CATCH_TEST_CASE("a folder whose weights do not match its config.json is refused, naming the first "
                "missing tensor, before any weight is read") {
  const std::string model = "openai-community--gpt2";
  auto folder = build_folder(kFixtures / "published" / model / "config.json", model);
  nlohmann::json cfg = testing::read_json(folder->dir / "config.json");
  // 13 layers claimed beside 12 layers' weights: within the values the files hold (they also hold
  // GPT-2's attn.bias masks), so the tensor-by-tensor check names what is missing.
  cfg["n_layer"] = 13;
  std::ofstream(folder->dir / "config.json") << cfg.dump();
  CATCH_CHECK_THROWS_WITH(check_pretrained(folder->dir), Catch::Contains("h.12.ln_1.weight") &&
                                                              Catch::Contains("missing"));
  CATCH_CHECK_THROWS_WITH(load_pretrained(folder->dir), Catch::Contains("missing"));
}

CATCH_TEST_CASE("hostile folders are refused before anything is allocated, in one line") {
  const std::string model = "openai-community--gpt2";
  const fs::path published = kFixtures / "published" / model / "config.json";
  auto edited = [&](const std::function<void(nlohmann::json&)>& edit) {
    auto folder = build_folder(published, model);
    nlohmann::json cfg = testing::read_json(folder->dir / "config.json");
    edit(cfg);
    std::ofstream(folder->dir / "config.json") << cfg.dump();
    return folder;
  };
  auto refusal = [](const Folder& f) {
    try {
      check_pretrained(f.dir);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  // A config claiming 100,000 layers, or 2^40 positions, beside 124M parameters' weights: refused
  // by the count before any model is built (not even on the meta device).
  const auto layers = edited([](nlohmann::json& c) { c["n_layer"] = 100000; });
  CATCH_CHECK_THAT(refusal(*layers), Catch::Contains("100000 layers of width 768") &&
                                         Catch::Contains("parameters, more than the") &&
                                         Catch::Contains("values the weight files hold"));
  const auto positions = edited([](nlohmann::json& c) { c["n_positions"] = int64_t{1} << 40; });
  CATCH_CHECK_THAT(refusal(*positions), Catch::Contains("1099511627776 positions) imply 8.444e+14 "
                                                        "parameters"));
  // A refused value of a megabyte is quoted in 80 bytes; a config nested 100,000 deep is refused
  // before anything walks it.
  const auto long_value = edited([](nlohmann::json& c) {
    c["attn_logit_softcapping"] = std::string(1 << 20, 'x');
  });
  const std::string message = refusal(*long_value);
  CATCH_CHECK_THAT(message, Catch::Contains("attn_logit_softcapping = \"xxxx"));
  CATCH_CHECK(message.size() < 600);
  auto deep = build_folder(published, model);
  {
    std::string text = "{\"model_type\": \"gpt2\", \"task_specific_params\": ";
    text.append(100000, '[');
    text.append(100000, ']');
    std::ofstream(deep->dir / "config.json") << text << "}";
  }
  CATCH_CHECK_THAT(refusal(*deep), Catch::Contains("config.json: the file nests objects or arrays"));
  std::ofstream(deep->dir / "config.json") << R"({"model_type": "gpt2", "n_layer": NaN})";
  CATCH_CHECK_THAT(refusal(*deep), Catch::Contains("config.json: the file is not valid JSON: parse "
                                                    "error at line 1, column 35") &&
                                       !Catch::Contains("json.exception"));
}

CATCH_TEST_CASE("the weights are read from model.safetensors where there is one, as transformers "
                "does, and an index naming no tensor is refused") {
  const std::string model = "openai-community--gpt2";
  auto folder = build_folder(kFixtures / "published" / model / "config.json", model);
  // An index beside model.safetensors, naming a shard that is not there: not read.
  std::ofstream(folder->dir / "model.safetensors.index.json")
      << R"({"weight_map": {"wte.weight": "model-00001-of-00002.safetensors"}})";
  CATCH_CHECK(check_pretrained(folder->dir).n_layer == 12);
  // Without model.safetensors the index is read, and an empty weight map is refused.
  fs::remove(folder->dir / "model.safetensors");
  std::ofstream(folder->dir / "model.safetensors.index.json") << R"({"weight_map": {}})";
  CATCH_CHECK_THROWS_WITH(check_pretrained(folder->dir),
                          Catch::Contains("model.safetensors.index.json: weight_map names no tensor"));
}

}  // namespace published_configs_test
