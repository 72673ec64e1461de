// model.init_from (model/pretrained/init_from.h): attnbench's decoder filled from a Hugging Face
// Llama-family folder computes the logits transformers computed on it (tests/fixtures/hf), with
// every variant that starts as softmax attention; whatever cannot start so is refused at config
// resolution, naming the key.
#include <catch2/catch.hpp>
#include <torch/torch.h>

#include <fstream>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/data/safetensors.h"
#include "model/decoder.h"
#include "model/pretrained/init_from.h"
#include "tests/hf_fixtures.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace init_from_test {

using namespace attnbench;
namespace fs = std::filesystem;

namespace {

const fs::path& kFixtures = testing::hf_fixtures();

config::RunConfig resolved(const std::string& fixture, const std::string& attention,
                           const std::string& model_keys = "") {
  const std::string context =
      model_keys.find("context_length") == std::string::npos ? "context_length = 32\n" : "";
  const std::string toml = "[model]\ninit_from = \"" + (kFixtures / fixture).string() + "\"\n" +
                           context + model_keys + "\n[attention]\n" + attention +
                           "\nbackend = \"eager\"\n";
  return config::parse_run_config(toml, "init_from.toml");
}

// The UsageError resolving that config throws ("" when it resolves).
std::string refusal(const std::string& fixture, const std::string& attention,
                    const std::string& model_keys = "") {
  try {
    (void)resolved(fixture, attention, model_keys);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// max over rows and positions of max |ours - expected| / max(1, max |expected|), as the fixture
// test of the imported models measures it.
double worst_relative_error(model::DecoderLMImpl& m, const std::string& fixture) {
  const fs::path dir = kFixtures / fixture;
  std::ifstream in(dir / "expected.json");
  const nlohmann::json expected = nlohmann::json::parse(in);
  const data::SafetensorsFile logits = data::SafetensorsFile::open(dir / "expected.safetensors");
  double worst = 0;
  const auto& rows = expected.at("input_ids");
  for (size_t i = 0; i < rows.size(); ++i) {
    const torch::Tensor ids = torch::tensor(rows[i].get<std::vector<int64_t>>(), torch::kInt64);
    const data::SafetensorsTensor* t = logits.find("logits_" + std::to_string(i));
    CATCH_REQUIRE(t != nullptr);
    torch::Tensor want = torch::empty(t->shape, torch::kFloat32);
    data::to_float32(*t, want.data_ptr<float>());
    torch::NoGradGuard no_grad;
    const torch::Tensor ours = m.forward(ids.unsqueeze(0))[0].narrow(1, 0, want.size(1));
    CATCH_REQUIRE(ours.sizes() == want.sizes());
    const double scale = std::max(1.0, want.abs().max().item<double>());
    worst = std::max(worst, (ours - want).abs().max().item<double>() / scale);
  }
  return worst;
}

}  // namespace

CATCH_TEST_CASE("a decoder started from a Llama-family folder computes transformers' logits "
                "with every variant that starts as softmax") {
  const std::vector<std::string> starts = {
      "variant = \"softmax\"",
      "variant = \"rope_bias\"",
      "variant = \"lazy\"\ntau_init = 0.0",
      "variant = \"elastic\"\ntau_init = 0.0\nrenormalize = true",
      "variant = \"lazy\"\ntau_init = 0.0\ntau_form = \"per_token\"",
  };
  for (const std::string fixture : {"llama_sharded", "mistral"}) {
    for (const std::string& attention : starts) {
      CATCH_INFO(fixture << ": " << attention);
      const config::RunConfig cfg = resolved(fixture, attention);
      CATCH_CHECK(cfg.model.preset == "pretrained");
      CATCH_CHECK(cfg.model.n_kv_head == 2);  // both fixtures group 4 query heads over 2
      torch::manual_seed(0);
      model::DecoderLM m(cfg);
      model::load_init_from(*m, cfg);
      CATCH_CHECK(worst_relative_error(*m, fixture) < 1e-5);
    }
  }
}

CATCH_TEST_CASE("a Llama 3 (llama3 RoPE scaling) or linearly scaled folder continues with its "
                "scaling: the same logits as transformers, and other logits without it") {
  for (const std::string fixture : {"llama_gqa", "llama_linear_tied"}) {
    for (const std::string attention :
         {"variant = \"softmax\"", "variant = \"lazy\"\ntau_init = 0.0"}) {
      CATCH_INFO(fixture << ": " << attention);
      const config::RunConfig cfg = resolved(fixture, attention);
      CATCH_CHECK(cfg.attention.get_string("rope_scaling") ==
                  (fixture == "llama_gqa" ? "llama3" : "linear"));
      model::DecoderLM m(cfg);
      model::load_init_from(*m, cfg);
      CATCH_CHECK(worst_relative_error(*m, fixture) < 1e-5);
      // The scaling is what makes it exact: the same weights rotated at the unscaled frequencies.
      config::RunConfig unscaled = cfg;
      for (const char* key : {"rope_scaling", "rope_scaling_factor", "rope_low_freq_factor",
                              "rope_high_freq_factor", "rope_original_max_position_embeddings"}) {
        unscaled.attention.params.erase(key);
      }
      model::DecoderLM plain(unscaled);
      model::load_init_from(*plain, cfg);  // the folder's shape; the module's own frequencies
      CATCH_CHECK(worst_relative_error(*plain, fixture) > 1e-3);
    }
  }
  const config::RunConfig cfg = resolved("llama_gqa", "variant = \"softmax\"");
  CATCH_CHECK(cfg.attention.get_float("rope_scaling_factor") == 8.0);
  CATCH_CHECK(cfg.attention.get_float("rope_original_max_position_embeddings") == 256.0);
  // A run without scaling keeps the id it had before the scaling parameters existed: none of them
  // is in its resolved config.
  CATCH_CHECK(
      resolved("llama_sharded", "variant = \"softmax\"").attention.params.count("rope_scaling") ==
      0);
}

CATCH_TEST_CASE("the variant's own parameters are what make the start exact: a lazy decoder at "
                "tau_init -1 computes other logits") {
  config::RunConfig cfg = resolved("llama_sharded", "variant = \"lazy\"\ntau_init = 0.0");
  cfg.attention.params["tau_init"] = -1.0;  // past the resolver's check, as a mutant would be
  model::DecoderLM m(cfg);
  model::load_init_from(*m, cfg);
  CATCH_CHECK(worst_relative_error(*m, "llama_sharded") > 1e-3);
}

CATCH_TEST_CASE("what cannot start as the pretrained model is refused naming the key") {
  using Catch::Matchers::Contains;
  CATCH_CHECK_THAT(refusal("llama_sharded", "variant = \"lazy\""),
                   Contains("attention.tau_init = -1") && Contains("tau_init = 0"));
  CATCH_CHECK_THAT(refusal("llama_sharded", "variant = \"alibi\""),
                   Contains("attention.position = alibi"));
  CATCH_CHECK_THAT(refusal("llama_sharded", "variant = \"sink_logit\""),
                   Contains("attention.sink = learned"));
  CATCH_CHECK_THAT(refusal("llama_sharded", "variant = \"gated\""),
                   Contains("attention.output_gate = elementwise"));
  CATCH_CHECK_THAT(refusal("llama_sharded", "variant = \"softpick\""),
                   Contains("attention.variant = softpick has no start equal to softmax"));
  CATCH_CHECK_THAT(refusal("gpt2", "variant = \"softmax\""), Contains("model_type = gpt2"));
  CATCH_CHECK_THAT(refusal("mistral_sliding", "variant = \"softmax\""),
                   Contains("sliding_window = 4") && Contains("model.context_length = 32"));
  CATCH_CHECK(refusal("mistral_sliding", "variant = \"softmax\"", "context_length = 4\n").empty());
  CATCH_CHECK_THAT(refusal("llama_gqa", "variant = \"softmax\"\nrope_scaling = \"linear\""),
                   Contains("attention.rope_scaling is set by model.init_from"));
  CATCH_CHECK_THAT(refusal("qwen2", "variant = \"softmax\""), Contains("attention biases"));
  CATCH_CHECK_THAT(refusal("llama_sharded", "variant = \"softmax\"", "d_model = 64\n"),
                   Contains("init_from.toml:4") &&
                       Contains("model.d_model is set by model.init_from"));
  CATCH_CHECK_THAT(refusal("llama_sharded", "variant = \"softmax\"\nrope_theta = 500000.0"),
                   Contains("attention.rope_theta is set by model.init_from"));
  CATCH_CHECK_THAT(refusal("llama_sharded", "variant = \"softmax\"", "context_length = 256\n"),
                   Contains("max_position_embeddings = 128"));
  const std::string not_a_model = "[model]\ninit_from = \"" + kFixtures.string() + "\"\n";
  CATCH_CHECK_THROWS_WITH(config::parse_run_config(not_a_model, "x.toml"),
                          Contains("x.toml:2") && Contains("is not a Hugging Face model folder"));
}

CATCH_TEST_CASE("a folder's RoPE values are held to the bounds a run config's are") {
  // rope_theta 1e300 is a finite number transformers would take, but no run config may set it:
  // continuing such a folder is refused, naming config.json and the variant's range.
  const fs::path dir = fs::temp_directory_path() / ("ab_init_from_theta_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(kFixtures / "llama_sharded", dir);
  nlohmann::json cfg = testing::read_json(dir / "config.json");
  cfg["rope_parameters"]["rope_theta"] = 1e300;
  std::ofstream(dir / "config.json") << cfg.dump();
  const std::string toml = "[model]\ninit_from = \"" + dir.string() + "\"\ncontext_length = 32\n";
  CATCH_CHECK_THROWS_WITH(config::parse_run_config(toml, "theta.toml"),
                          Catch::Matchers::Contains("config.json: its RoPE settings are outside") &&
                              Catch::Matchers::Contains("rope_theta"));
  fs::remove_all(dir);
}

CATCH_TEST_CASE("the folder sets the shape and the RoPE base and the BOS policy and the run id "
                "covers the folder") {
  const config::RunConfig cfg = resolved("llama_sharded", "variant = \"softmax\"");
  CATCH_CHECK(cfg.model.n_layer == 2);
  CATCH_CHECK(cfg.model.d_model == 32);
  CATCH_CHECK(cfg.model.n_head == 4);
  CATCH_CHECK(cfg.model.d_ffn == 64);
  CATCH_CHECK(cfg.model.vocab_size == 300);
  CATCH_CHECK(cfg.model.norm_eps == 1e-5);
  CATCH_CHECK(cfg.attention.get_float("rope_theta") == 10000.0);
  CATCH_CHECK(cfg.eval.bos == "prepend");  // the fixture's tokenizer adds BOS, as Llama's does
  // The resolved config reads back without the folder's help, to the same run id.
  const config::RunConfig back = config::from_json(config::to_json(cfg));
  CATCH_CHECK(config::config_hash(back) == config::config_hash(cfg));
  CATCH_CHECK(config::config_hash(resolved("mistral", "variant = \"softmax\"")) !=
              config::config_hash(cfg));
}

}  // namespace init_from_test
