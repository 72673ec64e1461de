// The registry: every preset is linked in and registered with its schema and defaults.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>

#include "core/common/error.h"
#include "tests/variants/support.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace registry_test {

using namespace attnbench;
using namespace attnbench::variants;
using config::Value;

namespace {
std::vector<std::string> keys(const config::ParamMap& m) {
  std::vector<std::string> k;
  for (auto& [name, v] : m) k.push_back(name);
  return k;
}
}  // namespace

CATCH_TEST_CASE("every registration in variants/ is registered, the paper's variants among them") {
  // Guards against the linker dropping a self-registering object file (docs/ARCHITECTURE.md,
  // "Rules"), without a list to edit for each new variant: the sources' RegisterVariant objects
  // are counted and must all be in the registry.
  const std::regex definition(R"(\bconst\s+RegisterVariant\s+\w+\s*[({])");
  size_t in_sources = 0;
  for (const auto& f : std::filesystem::directory_iterator(ATTNBENCH_SOURCE_DIR "/variants")) {
    if (f.path().extension() != ".cpp") continue;
    std::ifstream in(f.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in_sources += std::distance(std::sregex_iterator(text.begin(), text.end(), definition),
                                std::sregex_iterator());
  }
  CATCH_CHECK(in_sources >= 6);
  CATCH_CHECK(registered_variants().size() == in_sources);
  CATCH_CHECK(config::variant_names() == registered_variants());
  for (const char* name : {"alibi", "elastic", "lazy", "rope_bias", "sigmoid", "softmax"}) {
    CATCH_CHECK(config::find_variant_schema(name) != nullptr);
  }
}

CATCH_TEST_CASE("each preset resolves to its documented defaults, irrelevant keys dropped") {
  auto softmax = config::resolve_params("softmax", {});
  CATCH_CHECK(keys(softmax) == std::vector<std::string>{"normalizer", "position", "rope_theta"});
  CATCH_CHECK(std::get<std::string>(softmax["position"]) == "rope");
  CATCH_CHECK(std::get<double>(softmax["rope_theta"]) == 10000.0);

  auto alibi = config::resolve_params("alibi", {});
  CATCH_CHECK(keys(alibi) == std::vector<std::string>{"normalizer", "position"});
  CATCH_CHECK(std::get<std::string>(alibi["position"]) == "alibi");

  auto rope_bias = config::resolve_params("rope_bias", {});
  CATCH_CHECK(keys(rope_bias) ==
              std::vector<std::string>{"bias_window", "normalizer", "position", "rope_theta"});
  CATCH_CHECK(std::get<int64_t>(rope_bias["bias_window"]) == 1024);
  CATCH_CHECK(std::get<std::string>(rope_bias["normalizer"]) == "softmax");

  auto elastic = config::resolve_params("elastic", {});
  CATCH_CHECK(keys(elastic) == std::vector<std::string>{"normalizer", "position", "renormalize",
                                                        "rope_theta", "tau_form", "tau_init"});
  CATCH_CHECK(std::get<std::string>(elastic["position"]) == "rope");

  auto lazy = config::resolve_params("lazy", {});
  CATCH_CHECK(keys(lazy) ==
              std::vector<std::string>{"bias_window", "normalizer", "position", "renormalize",
                                       "rope_theta", "tau_form", "tau_init"});
  CATCH_CHECK(std::get<std::string>(lazy["position"]) == "rope+distance_bias");
  CATCH_CHECK(std::get<std::string>(lazy["normalizer"]) == "elastic");
  CATCH_CHECK(std::get<std::string>(lazy["tau_form"]) == "per_head_over_len");
  CATCH_CHECK(std::get<double>(lazy["tau_init"]) == -1.0);
  CATCH_CHECK(std::get<bool>(lazy["renormalize"]) == false);

  // tau_scale appears only for the per-token form.
  auto per_token = config::resolve_params("lazy", {{"tau_form", Value{std::string("per_token")}}});
  CATCH_CHECK(std::get<std::string>(per_token.at("tau_scale")) == "inv_len");
  // Switching a preset's normaliser off drops every elastic key.
  auto plain = config::resolve_params("lazy", {{"normalizer", Value{std::string("softmax")}}});
  CATCH_CHECK(keys(plain) ==
              std::vector<std::string>{"bias_window", "normalizer", "position", "rope_theta"});
}

CATCH_TEST_CASE("bad variant parameters are rejected with the valid choices") {
  CATCH_REQUIRE_THROWS_WITH(
      config::resolve_params("lazy", {{"tau_form", Value{std::string("per_tokn")}}}),
      Catch::Matchers::Contains("did you mean 'per_token'"));
  CATCH_REQUIRE_THROWS_WITH(
      config::resolve_params("lazy", {{"bias_window", Value{int64_t{0}}}}),
      Catch::Matchers::Contains("out of range"));
  CATCH_REQUIRE_THROWS_AS(config::resolve_params("lazy", {{"renormalize", Value{int64_t{1}}}}),
                          InputError);
}

CATCH_TEST_CASE("every variant with a position option lists its values and refuses others") {
  // Schemas are built during static initialisation, in an unspecified order across files: a list
  // of allowed values read from another file's global could still be empty then, and any value
  // would pass validation and fail later, without a location.
  int with_position = 0;
  for (const auto& name : registered_variants()) {
    CATCH_CAPTURE(name);
    for (const auto& p : config::find_variant_schema(name)->params) {
      if (p.type == config::ValueType::String) CATCH_CHECK(!p.allowed.empty());
      if (p.name != "position") continue;
      ++with_position;
      CATCH_CHECK_THROWS_AS(config::resolve_params(name, {{"position", Value{std::string("x")}}}),
                            InputError);
    }
  }
  CATCH_CHECK(with_position >= 6);
}

CATCH_TEST_CASE("make_variant names the registered variants for an unknown name") {
  VariantContext ctx;
  ctx.n_head = 2;
  ctx.head_dim = 4;
  ctx.d_model = 8;
  ctx.attention.variant = "lazzy";
  CATCH_REQUIRE_THROWS_WITH(make_variant(ctx), Catch::Matchers::Contains("did you mean 'lazy'") &&
                                                   Catch::Matchers::Contains("softmax"));
}

CATCH_TEST_CASE("parameters have the documented shapes, dtypes and initial values") {
  auto lazy = make_variant(test::context({"lazy", {}}, 4, 8, 32));
  auto p = test::params_of(*lazy);
  CATCH_REQUIRE(p.size() == 2);
  CATCH_CHECK(p.at("distance_bias").sizes() == torch::IntArrayRef({4, 1024}));
  CATCH_CHECK(p.at("distance_bias").scalar_type() == torch::kFloat32);
  CATCH_CHECK(p.at("distance_bias").abs().max().item<double>() == 0.0);
  CATCH_CHECK(p.at("tau").sizes() == torch::IntArrayRef({4}));
  CATCH_CHECK(torch::equal(p.at("tau"), torch::full({4}, -1.0f)));

  auto tok = make_variant(test::context(
      {"elastic", {{"tau_form", Value{std::string("per_token")}}, {"tau_init", Value{0.25}}}}, 4, 8,
      32));
  auto t = test::params_of(*tok);
  CATCH_REQUIRE(t.size() == 2);
  CATCH_CHECK(t.at("tau_proj.weight").sizes() == torch::IntArrayRef({4, 32}));
  CATCH_CHECK(t.at("tau_proj.weight").abs().max().item<double>() == 0.0);
  CATCH_CHECK(torch::equal(t.at("tau_proj.bias"), torch::full({4}, 0.25f)));

  CATCH_CHECK(test::params_of(*make_variant(test::context({"softmax", {}}, 4, 8, 32))).empty());
  CATCH_CHECK(test::params_of(*make_variant(test::context({"alibi", {}}, 4, 8, 32))).empty());
}

}  // namespace registry_test
