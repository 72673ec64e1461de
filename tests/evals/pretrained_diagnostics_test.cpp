// The attention diagnostics of an imported model measure what transformers computes: on each
// fixture's sentence (tests/fixtures/hf, scripts/make-hf-fixtures), the attention weights equal
// transformers' eager `output_attentions`, each layer's output its decoder layer's output, and the
// statistics attnbench stores (per layer and head sink mass and entropy, Gu et al.'s sink rate, the
// top activations, the median and the count of massive activations) equal those the fixture script
// computed in float64 from transformers' tensors, to 1e-5.
#include <catch2/catch.hpp>
#include <torch/torch.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/data/safetensors.h"
#include "evals/diagnostics/model_diagnostics.h"
#include "model/pretrained/hf_folder.h"
#include "tests/hf_fixtures.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace pretrained_diagnostics_test {

using namespace attnbench;
namespace fs = std::filesystem;
namespace diag = attnbench::evals::diagnostics;

namespace {

const fs::path& kFixtures = testing::hf_fixtures();

// |a - b| <= 1e-5 max(1, |b|).
bool close(double a, double b) { return std::abs(a - b) <= 1e-5 * std::max(1.0, std::abs(b)); }

struct Fixture {
  std::string name;
  nlohmann::json expected;
};

std::vector<Fixture> fixtures_with_diagnostics() {
  std::vector<Fixture> out;
  for (const auto& e : fs::directory_iterator(kFixtures)) {
    if (!fs::exists(e.path() / "expected.json")) continue;
    std::ifstream in(e.path() / "expected.json");
    nlohmann::json j = nlohmann::json::parse(in);
    if (j.contains("diagnostics")) out.push_back({e.path().filename().string(), std::move(j)});
  }
  std::sort(out.begin(), out.end(),
            [](const Fixture& a, const Fixture& b) { return a.name < b.name; });
  return out;
}

// The sentence's tokens measured as one window of all of them.
diag::ModelDiagnostics measure_sentence(model::CausalLMImpl& m,
                                        const std::vector<int64_t>& tokens) {
  diag::DiagnosticsOptions opts;
  opts.window = static_cast<int64_t>(tokens.size());
  opts.max_tokens = opts.window;
  opts.batch_size = 1;
  return diag::measure(m, tokens, opts);
}

void check_layer(const diag::ModelDiagnostics& d, size_t l, const nlohmann::json& want) {
  CATCH_INFO("layer " << l);
  const auto& heads = d.heads.at(l);
  const auto sink = want.at("sink_mass").get<std::vector<double>>();
  const auto entropy = want.at("entropy").get<std::vector<double>>();
  CATCH_REQUIRE(heads.size() == sink.size());
  for (size_t h = 0; h < heads.size(); ++h) {
    CATCH_INFO("head " << h << ": sink mass " << heads[h].sink_mass << " vs " << sink[h]
                       << ", entropy " << heads[h].entropy << " vs " << entropy[h]);
    CATCH_CHECK(close(heads[h].sink_mass, sink[h]));
    CATCH_CHECK(close(heads[h].entropy, entropy[h]));
  }
  CATCH_CHECK(diag::sink_rate(heads, d.sink_threshold) == want.at("sink_rate").get<double>());
  const diag::HiddenStats& hs = d.hidden.at(l);
  const auto top = want.at("top_activation").get<std::vector<double>>();
  for (size_t r = 0; r < 3; ++r) CATCH_CHECK(close(hs.top_activation[r], top[r]));
  CATCH_CHECK(close(hs.median_activation, want.at("median_activation").get<double>()));
  CATCH_CHECK(hs.massive_activations == want.at("massive_activations").get<double>());
}

}  // namespace

CATCH_TEST_CASE("an imported model's attention statistics and hidden states equal those of "
                "transformers' attentions and layer outputs, every architecture") {
  const std::vector<Fixture> all = fixtures_with_diagnostics();
  CATCH_REQUIRE(all.size() >= 15);
  std::set<std::string> types;
  for (const Fixture& f : all) {
    CATCH_INFO("fixture " << f.name);
    types.insert(f.expected.at("model_type").get<std::string>());
    model::pretrained::PretrainedModel m = model::pretrained::load_pretrained(kFixtures / f.name);
    const nlohmann::json& want = f.expected.at("diagnostics");
    const auto tokens =
        f.expected.at("input_ids").at(want.at("row").get<size_t>()).get<std::vector<int64_t>>();
    const data::SafetensorsFile file =
        data::SafetensorsFile::open(kFixtures / f.name / "expected.safetensors");
    // The tensors the statistics are computed from, layer by layer.
    torch::NoGradGuard no_grad;
    torch::Tensor h = m.model->embed(torch::tensor(tokens).unsqueeze(0));
    const auto& layers = want.at("layers");
    CATCH_REQUIRE(static_cast<int64_t>(layers.size()) == m.model->shape().n_layer);
    for (size_t l = 0; l < layers.size(); ++l) {
      CATCH_INFO("layer " << l);
      torch::Tensor weights;
      h = m.model->layer(static_cast<int64_t>(l), h, &weights);
      const torch::Tensor a =
          testing::fixture_tensor(file, layers[l].at("attentions").get<std::string>());
      const torch::Tensor out =
          testing::fixture_tensor(file, layers[l].at("layer_output").get<std::string>());
      CATCH_CHECK(torch::allclose(weights[0], a, 1e-5, 1e-6));
      CATCH_CHECK(torch::allclose(h[0], out, 1e-5, 1e-5));
    }
    const diag::ModelDiagnostics d = measure_sentence(*m.model, tokens);
    CATCH_REQUIRE(d.windows == 1);
    for (size_t l = 0; l < layers.size(); ++l) check_layer(d, l, layers[l]);
  }
  CATCH_CHECK(types ==
              std::set<std::string>{"gpt2", "gpt_neox", "llama", "mistral", "opt", "qwen2"});
}

}  // namespace pretrained_diagnostics_test
