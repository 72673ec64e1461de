// Fuzzes the JSON files of a Hugging Face model folder (docs/pretrained.md, docs/reliability.md
// "Fuzzing and sanitizers"). The first byte picks the file the rest of the input becomes:
//   0: config.json, read by HFConfig (model/pretrained/hf_config.h: the bounded reader, the key
//      policy of finish(), every typed accessor on every key) and is_hf_model_folder;
//   1: tokenizer.json, loaded as a tokenizer (core/data/hf_tokenizer.h), which then encodes and
//      decodes a short text;
//   2: tokenizer_config.json, beside the gpt2 fixture tokenizer's tokenizer.json.
// Each must load or be refused with a clean error (tests/fuzz/fuzz_support.h); the index is fuzzed
// with the safetensors files (safetensors_fuzz.cpp).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "core/data/hf_model_folder.h"
#include "core/data/hf_tokenizer.h"
#include "model/pretrained/hf_config.h"
#include "tests/fuzz/fuzz_support.h"

using namespace attnbench;
namespace fs = std::filesystem;

namespace {

const fs::path kFixtureTokenizer =
    fs::path(__FILE__).parent_path().parent_path() / "fixtures" / "tokenizers" / "gpt2";

// Reads every key the way the architectures read keys, so that no accessor meets a value it
// cannot take without a clean error, then the key policy.
void read_config(const fs::path& dir) {
  (void)data::is_hf_model_folder(dir);
  const model::pretrained::HFConfig cfg = model::pretrained::HFConfig::read(dir / "config.json");
  nlohmann::json j;
  {
    std::ifstream in(dir / "config.json");
    j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  }
  if (j.is_object()) {
    for (const auto& item : j.items()) {
      const std::string key = item.key();  // a named copy: C++17 lambdas capture no bindings
      fuzz::expect_clean_errors([&] { (void)cfg.size(key, 1); });
      fuzz::expect_clean_errors([&] { (void)cfg.positive(key, 1.0); });
      fuzz::expect_clean_errors([&] { (void)cfg.boolean(key, false); });
      fuzz::expect_clean_errors([&] { (void)cfg.string(key, ""); });
      fuzz::expect_clean_errors([&] { (void)cfg.object(key); });
    }
  }
  cfg.finish();
}

void load_tokenizer(const fs::path& dir) {
  const data::HFTokenizer t = data::HFTokenizer::load(dir);
  const std::vector<uint32_t> ids = t.encode("The quick brown fox, 123 <|endoftext|>!");
  (void)t.decode(ids);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const fs::path dir = fuzz::scratch() / "model";
  fs::remove_all(dir);
  switch (data[0] % 3) {
    case 0:
      fuzz::write_file(dir / "config.json", rest);
      fuzz::expect_clean_errors([&] { read_config(dir); });
      break;
    case 1:
      fuzz::write_file(dir / "tokenizer.json", rest);
      fuzz::expect_clean_errors([&] { load_tokenizer(dir); });
      break;
    default:
      fs::create_directories(dir);
      fs::copy_file(kFixtureTokenizer / "tokenizer.json", dir / "tokenizer.json");
      fuzz::write_file(dir / "tokenizer_config.json", rest);
      fuzz::expect_clean_errors([&] { load_tokenizer(dir); });
      break;
  }
  return 0;
}
