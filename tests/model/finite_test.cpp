// Non-finite models (model/finite.h): the tensor holding a NaN or an infinity is named, and a model
// whose weights are finite but overflow is caught by the probe forward; a checkpoint of such a model
// is refused when loaded for scoring (evals::load_scored_model, in tests/evals).
#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "core/config/run_config.h"
#include "model/decoder.h"
#include "model/finite.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace finite_test {

using namespace attnbench;

namespace {

model::DecoderLM tiny_model() {
  torch::manual_seed(0);
  return model::DecoderLM(config::parse_run_config(
      "[model]\npreset = \"tiny\"\nvocab_size = 32\ncontext_length = 16\n[attention]\n"
      "variant = \"softmax\"\nbackend = \"eager\"\n[data]\nfixed_token_id = 0\n",
      "test.toml"));
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

torch::Tensor& parameter(model::DecoderLM& net, const std::string& name) {
  for (auto& p : net->named_parameters()) {
    if (p.key() == name) return p.value();
  }
  throw std::logic_error("no parameter " + name);
}

}  // namespace

CATCH_TEST_CASE("finite: a finite model passes, a NaN or infinity is named with its count") {
  model::DecoderLM net = tiny_model();
  CATCH_CHECK(model::first_non_finite_tensor(*net).empty());
  CATCH_CHECK_NOTHROW(model::require_finite_model(*net, "ckpt"));

  const std::string name = net->named_parameters().keys().at(3);
  torch::NoGradGuard no_grad;
  torch::Tensor& w = parameter(net, name);
  w.view(-1)[0] = std::numeric_limits<float>::quiet_NaN();
  w.view(-1)[1] = -std::numeric_limits<float>::infinity();
  CATCH_CHECK(model::first_non_finite_tensor(*net) ==
              name + " (2 of " + std::to_string(w.numel()) + " values)");
  CATCH_CHECK_THAT(message_of([&] { model::require_finite_model(*net, "runs/x/checkpoint"); }),
                   Catch::StartsWith("runs/x/checkpoint: tensor " + name) &&
                       Catch::Contains("not scored"));
}

CATCH_TEST_CASE("finite: a tensor of millions of values is counted over every slice") {
  // Read in slices of 2^20 values (no temporary as large as the tensor): bad values in the first,
  // a middle and the last, partial slice are all counted.
  torch::nn::Module m;
  const int64_t n = 3 * (int64_t{1} << 20) + 5;
  torch::Tensor w = m.register_parameter("w", torch::zeros({n}), false);
  CATCH_CHECK(model::first_non_finite_tensor(m).empty());
  torch::NoGradGuard no_grad;
  w[0] = std::numeric_limits<float>::quiet_NaN();
  w[(int64_t{1} << 20) + 7] = std::numeric_limits<float>::infinity();
  w[n - 1] = -std::numeric_limits<float>::infinity();
  CATCH_CHECK(model::first_non_finite_tensor(m) == "w (3 of " + std::to_string(n) + " values)");
}

CATCH_TEST_CASE("finite: finite weights whose logits overflow are caught by the probe") {
  model::DecoderLM net = tiny_model();
  torch::NoGradGuard no_grad;
  // Normalised states have entries above 1: scaled by 3e38 they pass float32's largest value.
  parameter(net, "final_norm.weight").fill_(3e38f);
  CATCH_CHECK(model::first_non_finite_tensor(*net).empty());
  CATCH_CHECK_THAT(message_of([&] { model::require_finite_model(*net, "ckpt"); }),
                   Catch::StartsWith("ckpt: its logits are NaN or infinite at position 0"));
}

}  // namespace finite_test
