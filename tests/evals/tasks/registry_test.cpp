#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "evals/tasks/task.h"

using namespace attnbench;
using namespace attnbench::evals;

CATCH_TEST_CASE("every task of the issue is registered, with lm-eval's metrics") {
  // The full list: a registration dropped by the linker would silently vanish
  // (docs/ARCHITECTURE.md, "Rules").
  const std::vector<std::string> expected = {
      "arc_challenge", "arc_easy",   "boolq",      "copa", "hellaswag", "lambada_openai",
      "openbookqa",    "piqa",       "sciq",       "social_iqa", "wikitext", "winogrande"};
  CATCH_CHECK(task_names() == expected);

  struct Row {
    const char* name;
    OutputType type;
    std::vector<std::string> metrics;
    const char* paper;
  };
  const std::vector<Row> rows = {
      {"arc_easy", OutputType::MultipleChoice, {"acc", "acc_norm"}, "acc_norm"},
      {"arc_challenge", OutputType::MultipleChoice, {"acc", "acc_norm"}, "acc_norm"},
      {"hellaswag", OutputType::MultipleChoice, {"acc", "acc_norm"}, "acc_norm"},
      {"piqa", OutputType::MultipleChoice, {"acc", "acc_norm"}, "acc_norm"},
      {"openbookqa", OutputType::MultipleChoice, {"acc", "acc_norm"}, "acc_norm"},
      {"sciq", OutputType::MultipleChoice, {"acc", "acc_norm"}, "acc_norm"},
      {"winogrande", OutputType::MultipleChoice, {"acc"}, "acc"},
      {"boolq", OutputType::MultipleChoice, {"acc"}, "acc"},
      {"copa", OutputType::MultipleChoice, {"acc"}, "acc"},
      {"social_iqa", OutputType::MultipleChoice, {"acc"}, "acc"},
      {"lambada_openai", OutputType::Loglikelihood, {"perplexity", "acc"}, "perplexity"},
      {"wikitext", OutputType::LoglikelihoodRolling,
       {"word_perplexity", "byte_perplexity", "bits_per_byte"}, "word_perplexity"},
  };
  for (const auto& r : rows) {
    CATCH_INFO(r.name);
    const auto& spec = find_task(r.name);
    CATCH_CHECK(spec.name == r.name);
    CATCH_CHECK(spec.type == r.type);
    CATCH_CHECK(spec.metrics == r.metrics);
    CATCH_CHECK(spec.paper_metric == r.paper);
    CATCH_CHECK(!spec.description.empty());
    CATCH_CHECK(static_cast<bool>(spec.load));
  }
}

CATCH_TEST_CASE("expand_task_list: all, paper, lists, errors") {
  CATCH_CHECK(expand_task_list("all") == task_names());
  CATCH_CHECK(expand_task_list("paper") ==
              std::vector<std::string>{"piqa", "hellaswag", "winogrande", "arc_easy",
                                       "arc_challenge", "boolq", "sciq", "copa", "openbookqa"});
  CATCH_CHECK(expand_task_list("copa, piqa,copa") == std::vector<std::string>{"copa", "piqa"});
  CATCH_CHECK(expand_task_list("paper,wikitext").size() == 10);
  CATCH_REQUIRE_THROWS_AS(expand_task_list("piqa,,copa"), UsageError);
  CATCH_REQUIRE_THROWS_AS(expand_task_list(""), UsageError);
  CATCH_REQUIRE_THROWS_WITH(expand_task_list("hellaswg"),
                            Catch::Matchers::Contains("did you mean 'hellaswag'"));
  CATCH_REQUIRE_THROWS_AS(find_task("nope"), UsageError);
}

CATCH_TEST_CASE("a missing data file names the expected path and both layouts") {
  const auto& spec = find_task("arc_easy");
  try {
    spec.load("/nonexistent_attnbench_root");
    CATCH_FAIL("expected a UsageError");
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    CATCH_CHECK_THAT(msg, Catch::Matchers::Contains(
                              "/nonexistent_attnbench_root/arc_easy/ARC-Easy-Test.jsonl"));
    CATCH_CHECK_THAT(msg, Catch::Matchers::Contains("arc_easy/hf_format/test.jsonl"));
    CATCH_CHECK_THAT(msg, Catch::Matchers::Contains("ATTNBENCH_DATA"));
  }
}

CATCH_TEST_CASE("every task's data source is where its loader looks for the hub export") {
  // `attnbench data fetch` writes <folder>/hf_format/<split>.jsonl from each registered source: the
  // loader must look there, or a fetched task would not load.
  for (const std::string& name : task_names()) {
    const TaskSpec& spec = find_task(name);
    CATCH_CAPTURE(name);
    CATCH_CHECK(!spec.source.dataset.empty());
    CATCH_CHECK(!spec.source.config.empty());
    const std::string fetched = spec.source.folder + "/hf_format/" + spec.source.split + ".jsonl";
    try {
      spec.load("/nonexistent_attnbench_root");
      CATCH_FAIL("expected a UsageError");
    } catch (const UsageError& e) {
      CATCH_CHECK_THAT(std::string(e.what()), Catch::Matchers::Contains("<data root>/" + fetched));
    }
  }
}
