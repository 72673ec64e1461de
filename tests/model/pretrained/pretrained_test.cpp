// Hugging Face folders against the logits transformers computed on them (tests/fixtures/hf, made by
// scripts/make-hf-fixtures): every architecture and option, 1e-5 relative in float32; the
// incremental path (a cache fed in pieces) equals the full pass; bad folders are refused naming the
// file or key.
#include <catch2/catch.hpp>
#include <torch/torch.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/data/safetensors.h"
#include "model/pretrained/hf_folder.h"
#include "tests/hf_fixtures.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace pretrained_test {

using namespace attnbench;
using namespace attnbench::model::pretrained;
namespace fs = std::filesystem;

namespace {

const fs::path& kFixtures = testing::hf_fixtures();

// max |ours - expected| / max(1, max |expected|) over one row's logits.
double relative_error(const torch::Tensor& ours, const torch::Tensor& expected) {
  const double scale = std::max(1.0, expected.abs().max().item<double>());
  return (ours - expected).abs().max().item<double>() / scale;
}

std::vector<std::string> cases() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(kFixtures)) {
    if (fs::exists(e.path() / "expected.json")) out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

CATCH_TEST_CASE("every fixture's logits equal transformers' to 1e-5 relative") {
  const std::vector<std::string> all = cases();
  CATCH_REQUIRE(all.size() >= 15);
  for (const std::string& name : all) {
    CATCH_INFO("fixture " << name);
    const nlohmann::json expected = testing::read_json(kFixtures / name / "expected.json");
    PretrainedModel m = load_pretrained(kFixtures / name);
    CATCH_CHECK(m.model->config().model_type == expected.at("model_type").get<std::string>());
    const data::SafetensorsFile logits =
        data::SafetensorsFile::open(kFixtures / name / "expected.safetensors");
    const auto& rows = expected.at("input_ids");
    for (size_t i = 0; i < rows.size(); ++i) {
      const torch::Tensor ids = torch::tensor(rows[i].get<std::vector<int64_t>>(), torch::kInt64);
      torch::NoGradGuard no_grad;
      const torch::Tensor ours = m.model->head(m.model->hidden(ids.unsqueeze(0)))[0];
      const torch::Tensor want = testing::fixture_tensor(logits, "logits_" + std::to_string(i));
      CATCH_REQUIRE(ours.sizes() == want.sizes());
      CATCH_CHECK(relative_error(ours, want) < 1e-5);
    }
  }
}

CATCH_TEST_CASE("a cache fed in pieces gives the full pass's logits") {
  for (const char* name : {"gpt2", "llama_gqa", "gpt_neox", "opt_post_ln", "mistral_sliding",
                           "qwen2_sliding"}) {
    CATCH_INFO("fixture " << name);
    PretrainedModel m = load_pretrained(kFixtures / name);
    torch::manual_seed(3);
    const torch::Tensor ids =
        torch::randint(0, m.model->shape().vocab_size, {2, 12}, torch::kInt64);
    torch::NoGradGuard no_grad;
    const torch::Tensor full = m.model->hidden(ids);
    model::DecoderCache cache;
    const torch::Tensor a = m.model->hidden(ids.narrow(1, 0, 5), &cache);
    const torch::Tensor b = m.model->hidden(ids.narrow(1, 5, 1), &cache);
    const torch::Tensor c = m.model->hidden(ids.narrow(1, 6, 6), &cache);
    CATCH_CHECK(cache.length() == 12);
    // Grouped-query attention: the cache holds the key/value heads, not every query head's copy.
    CATCH_CHECK(cache.layers.front().k.size(1) == m.model->config().n_kv_head);
    CATCH_CHECK(torch::allclose(torch::cat({a, b, c}, 1), full, 1e-5, 1e-5));
    // The layer-at-a-time path of the diagnostics: same trunk, weights of every query head.
    torch::Tensor h = m.model->embed(ids);
    for (int64_t l = 0; l < m.model->shape().n_layer; ++l) {
      torch::Tensor w;
      h = m.model->layer(l, h, &w);
      CATCH_CHECK(w.sizes() == torch::IntArrayRef({2, m.model->shape().n_head, 12, 12}));
      CATCH_CHECK(
          torch::allclose(w.sum(-1), torch::ones({2, m.model->shape().n_head, 12}), 1e-5, 1e-5));
    }
  }
}

CATCH_TEST_CASE("bad folders are refused naming the file or key") {
  auto refusal = [](const std::string& bad) {
    try {
      load_pretrained(kFixtures / "bad" / bad);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(loaded)");
  };
  CATCH_CHECK_THAT(refusal("missing_shard"),
                   Catch::Contains("shard") && Catch::Contains("missing"));
  CATCH_CHECK_THAT(refusal("truncated"), Catch::Contains("model.safetensors"));
  CATCH_CHECK_THAT(refusal("unknown_model_type"),
                   Catch::Contains("config.json") && Catch::Contains("frobnicator"));
  CATCH_CHECK_THAT(refusal("softcapping"),
                   Catch::Contains("attn_logit_softcapping") && Catch::Contains("gemma2"));
  CATCH_CHECK_THAT(refusal("embedding_multiplier"),
                   Catch::Contains("embedding_multiplier") && Catch::Contains("granite") &&
                       Catch::Contains("attnbench's llama does not compute it"));
  CATCH_CHECK_THAT(refusal("rope_scaling_yarn"), Catch::Contains("yarn"));
  CATCH_CHECK_THAT(refusal("no_such_folder"), Catch::Contains("no_such_folder"));
}

}  // namespace pretrained_test
