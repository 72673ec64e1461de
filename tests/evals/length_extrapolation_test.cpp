// Length extrapolation (docs/evaluation.md, "Length extrapolation"): a model scored at more tokens
// than it was trained at, named task@N, refused where its positions end.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "core/config/run_config.h"
#include "evals/decoder_lm_adapter.h"
#include "evals/evaluator.h"
#include "model/decoder.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace length_extrapolation_test {

using namespace attnbench;
using namespace attnbench::evals;

namespace {

std::shared_ptr<model::CausalLMImpl> tiny_model(const std::string& variant, const std::string& position) {
  torch::manual_seed(3);
  const config::RunConfig cfg = config::parse_run_config(
      "[model]\npreset = \"tiny\"\ncontext_length = 16\n[attention]\nvariant = \"" + variant +
          "\"\nposition = \"" + position + "\"\n",
      "length-extrapolation-test");
  return model::DecoderLM(cfg).ptr();
}

// One rolling document of `tokens` tokens: each character is one token.
TaskReport score_rolling(LanguageModel& lm, int64_t tokens) {
  Doc doc;
  doc.text = std::string(static_cast<size_t>(tokens), 'a');
  for (size_t i = 0; i < doc.text.size(); ++i) doc.text[i] = static_cast<char>('a' + i % 26);
  doc.requests.push_back({"", doc.text});
  doc.word_count = 1;
  doc.byte_count = tokens;
  const TextEncoder encode = [](std::string_view text) {
    std::vector<int64_t> ids;
    for (char c : text) ids.push_back(c - 'a' + 1);
    return ids;
  };
  EvalOptions options;
  options.bootstrap_iters = 0;
  return evaluate_docs(lm, encode, scored_task_name("doc", lm), OutputType::LoglikelihoodRolling,
                       {"word_perplexity"}, {doc}, options);
}

}  // namespace

CATCH_TEST_CASE("task@N names a task scored at another length, and parses back") {
  CATCH_CHECK(task_at_length("wikitext", 256, 256) == "wikitext");
  CATCH_CHECK(task_at_length("wikitext", 1024, 256) == "wikitext@1024");
  CATCH_CHECK(parse_task_at_length("wikitext@1024").task == "wikitext");
  CATCH_CHECK(parse_task_at_length("wikitext@1024").length == 1024);
  CATCH_CHECK(parse_task_at_length("piqa").length == 0);
  CATCH_CHECK_THROWS_AS(parse_task_at_length("wikitext@"), UsageError);
  CATCH_CHECK_THROWS_AS(parse_task_at_length("wikitext@1k"), UsageError);
}

CATCH_TEST_CASE("every position scheme of our models is scored past its training context") {
  for (const auto& [variant, position] : std::vector<std::pair<std::string, std::string>>{
           {"softmax", "rope"}, {"softmax", "alibi"}, {"softmax", "none"}, {"lazy", "rope+distance_bias"}}) {
    CATCH_CAPTURE(variant, position);
    const auto m = tiny_model(variant, position);
    DecoderLMAdapter at_training(m), at_4x(m, 64);
    CATCH_CHECK(at_training.max_length() == 16);
    CATCH_CHECK(at_4x.max_length() == 64);
    CATCH_CHECK(at_4x.trained_length() == 16);
    // 63 tokens: windows of at most 16 tokens at the training context, one window at 64.
    const TaskReport within = score_rolling(at_training, 63);
    const TaskReport beyond = score_rolling(at_4x, 63);
    CATCH_CHECK(within.task == "doc");
    CATCH_CHECK(beyond.task == "doc@64");
    CATCH_CHECK(within.requests > 1);
    CATCH_CHECK(beyond.requests == 1);
    CATCH_CHECK(std::isfinite(beyond.metrics.at(0).value));
  }
}

CATCH_TEST_CASE("scoring_length refuses a length past the positions a model has, naming why") {
  model::LMShape shape;
  shape.context_length = 1024;
  CATCH_CHECK(model::scoring_length(shape, 0, "--context") == 1024);
  CATCH_CHECK(model::scoring_length(shape, 4096, "--context") == 4096);  // positions computed
  shape.max_positions = 1024;
  shape.max_positions_reason = "its learned absolute positions end there";
  CATCH_CHECK(model::scoring_length(shape, 512, "--context") == 512);
  CATCH_CHECK_THROWS_WITH(model::scoring_length(shape, 2048, "--context"),
                          Catch::Matchers::Contains("--context 2048") &&
                              Catch::Matchers::Contains("at most 1024 tokens") &&
                              Catch::Matchers::Contains("learned absolute positions"));
}

}  // namespace length_extrapolation_test
