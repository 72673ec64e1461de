// PIQA, Social IQa and OpenBookQA: expected strings typed from the raw lines of valid.jsonl /
// valid-labels.lst, dev.jsonl / dev-labels.lst and test.jsonl, following the templates in
// docs/tasks.md, "The tasks" (piqa.yaml, siqa.yaml, openbookqa.yaml).
#include "tests/evals/tasks/task_test_util.h"

using namespace attnbench::evals;
using namespace attnbench::evals::test;

CATCH_TEST_CASE("piqa: item count and pinned prompts") {
  auto root = data_root_or_skip();
  if (!root) return;
  const auto docs = load("piqa", *root);
  CATCH_REQUIRE(docs.size() == 1838);
  check_mc(docs[0], "Question: How do I ready a guinea pig cage for it's new occupants?\nAnswer:",
           {"Provide the guinea pig with a cage full of a few inches of bedding made of ripped paper "
            "strips, you will also need to supply it with a water bottle and a food dish.",
            "Provide the guinea pig with a cage full of a few inches of bedding made of ripped jeans "
            "material, you will also need to supply it with a water bottle and a food dish."},
           0);
  // Line 2: trailing spaces and a double space inside the solutions are kept; label line 2 is 1.
  check_mc(docs[1], "Question: dresser\nAnswer:",
           {"replace drawer with bobby pin ", "finish, woodgrain with  bobby pin "}, 1);
  CATCH_CHECK(docs[1].requests[1].continuation == " finish, woodgrain with  bobby pin ");
  check_mc(docs[1837], "Question: Where can I buy a tennis ball\nAnswer:",
           {"You can purchase a tennis ball at any sports store",
            "You can purchase a tennis racket at any sports store"},
           0);
}

CATCH_TEST_CASE("piqa: hub rows (label in the row) give the same docs, and labels file checked") {
  TempRoot hub;
  hub.write("piqa/hf_format/validation.jsonl",
            R"({"goal": "dresser", "sol1": "replace drawer with bobby pin ", "sol2": "finish, woodgrain with  bobby pin ", "label": 1})"
            "\n");
  const auto docs = load("piqa", hub.path());
  CATCH_REQUIRE(docs.size() == 1);
  check_mc(docs[0], "Question: dresser\nAnswer:",
           {"replace drawer with bobby pin ", "finish, woodgrain with  bobby pin "}, 1);

  TempRoot official;
  official.write("piqa/valid.jsonl", R"({"goal": "g", "sol1": "a", "sol2": "b"})"
                                     "\n");
  CATCH_REQUIRE_THROWS_WITH(load("piqa", official.path()),
                            Catch::Matchers::Contains("piqa/valid-labels.lst"));
  official.write("piqa/valid-labels.lst", "1\n0\n");
  CATCH_REQUIRE_THROWS_WITH(load("piqa", official.path()), Catch::Matchers::Contains("2 labels"));
  official.write("piqa/valid-labels.lst", "x\n");
  CATCH_REQUIRE_THROWS_WITH(load("piqa", official.path()),
                            Catch::Matchers::Contains("valid-labels.lst:1"));
  official.write("piqa/valid-labels.lst", "2\n");
  CATCH_REQUIRE_THROWS_WITH(load("piqa", official.path()), Catch::Matchers::Contains("valid.jsonl:1"));
}

CATCH_TEST_CASE("social_iqa: item count and pinned prompts") {
  auto root = data_root_or_skip();
  if (!root) return;
  const auto docs = load("social_iqa", *root);
  CATCH_REQUIRE(docs.size() == 1954);
  check_mc(docs[0],
           "Q: Tracy didn't go home that evening and resisted Riley's attacks. What does Tracy need "
           "to do before this?\nA:",
           {"make a new plan", "Go home and see Riley", "Find somewhere to go"}, 2);
  // Line 67: a double space inside the context survives the template.
  check_mc(docs[66],
           "Q: Cameron's parents told them to do well at school or they would be grounded.  Cameron "
           "took their words seriously. What will happen to Cameron?\nA:",
           {"listen or face severe punishment", "study very hard",
            "have his assignments done by their classmates"},
           1);
  check_mc(docs[1953],
           "Q: Aubrey the officer pulled a driver over for speeding on the road. Why did Aubrey do "
           "this?\nA:",
           {"find a safe place to pull the person over", "so people don't drive to fast",
            "look up the person's license plate number"},
           1);
}

CATCH_TEST_CASE("social_iqa: hub rows (label \"1\"..\"3\") give the same docs") {
  TempRoot hub;
  hub.write("siqa/hf_format/validation.jsonl",
            R"({"context": "Tracy didn't go home that evening and resisted Riley's attacks.", "question": "What does Tracy need to do before this?", "answerA": "make a new plan", "answerB": "Go home and see Riley", "answerC": "Find somewhere to go", "label": "3"})"
            "\n");
  const auto docs = load("social_iqa", hub.path());
  CATCH_REQUIRE(docs.size() == 1);
  check_mc(docs[0],
           "Q: Tracy didn't go home that evening and resisted Riley's attacks. What does Tracy need "
           "to do before this?\nA:",
           {"make a new plan", "Go home and see Riley", "Find somewhere to go"}, 2);
}

CATCH_TEST_CASE("openbookqa: item count and pinned prompts") {
  auto root = data_root_or_skip();
  if (!root) return;
  const auto docs = load("openbookqa", *root);
  CATCH_REQUIRE(docs.size() == 500);
  // The context is question_stem itself: no "Question:" prefix, no "Answer:" suffix.
  check_mc(docs[0],
           "A person wants to start saving money so that they can afford a nice vacation at the end "
           "of the year. After looking over their budget and expenses, they decide the best way to "
           "save money is to",
           {"make more phone calls", "quit eating lunch out", "buy less with monopoly money",
            "have lunch with friends"},
           1);
  // Line 11: a stem ending in ':' and a choice ending in '.'.
  check_mc(docs[10], "It's easier for human's to survive in:",
           {"a cave", "the ocean.", "a town", "alone"}, 2);
  check_mc(docs[499], "Some animals use a liquid coming from their skin to adjust to",
           {"cold", "water", "heat", "humidity"}, 2);
}

CATCH_TEST_CASE("openbookqa: hub rows (question_stem, answerKey.lstrip()) give the same docs") {
  TempRoot hub;
  // Line 11 of test.jsonl in the allenai/openbookqa layout; answerKey " C" tests the lstrip().
  hub.write("openbookqa/hf_format/test.jsonl",
            R"({"id": "7-511", "question_stem": "It's easier for human's to survive in:", "choices": {"text": ["a cave", "the ocean.", "a town", "alone"], "label": ["A", "B", "C", "D"]}, "answerKey": " C"})"
            "\n");
  const auto docs = load("openbookqa", hub.path());
  CATCH_REQUIRE(docs.size() == 1);
  check_mc(docs[0], "It's easier for human's to survive in:", {"a cave", "the ocean.", "a town", "alone"},
           2);
}
