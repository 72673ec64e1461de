// ARC: expected strings typed from the raw lines of ARC-Easy-Test.jsonl / ARC-Challenge-Test.jsonl
// and the template of arc/arc_easy.yaml: "Question: {{question}}\nAnswer:", choices choices.text,
// gold choices.label.index(answerKey) (docs/tasks.md, "arc_easy, arc_challenge").
#include "tests/evals/tasks/task_test_util.h"

#include "core/common/error.h"

using namespace attnbench;
using namespace attnbench::evals;
using namespace attnbench::evals::test;

CATCH_TEST_CASE("arc_easy: item count and pinned prompts") {
  auto root = data_root_or_skip();
  if (!root) return;
  const auto docs = load("arc_easy", *root);
  CATCH_REQUIRE(docs.size() == 2376);
  // Line 1 (Mercury_417466).
  check_mc(docs[0],
           "Question: Which statement best explains why photosynthesis is the foundation of most "
           "food webs?\nAnswer:",
           {"Sunlight is the source of energy for nearly all ecosystems.",
            "Most ecosystems are found on land instead of in water.",
            "Carbon dioxide is more available than other gases.",
            "The producers in all ecosystems are plants."},
           0);
  CATCH_CHECK(docs[0].requests[0].continuation ==
              " Sunlight is the source of energy for nearly all ecosystems.");
  // Line 15 (NYSEDREGENTS_2015_8_28): numeric labels "1".."4", answerKey "2".
  check_mc(docs[14], "Question: All living and nonliving material is composed of\nAnswer:",
           {"air", "elements", "water", "soil"}, 1);
  // Line 23 (Mercury_SC_415412): non-ASCII degree signs in the choices.
  check_mc(docs[22], "Question: Which is a statement about climate?\nAnswer:",
           {"The average temperature yesterday was 15\u00b0C.",
            "The temperature range today was 10\u00b0C to 20\u00b0C.",
            "The high temperature tomorrow will be 14\u00b0C.",
            "The average high temperature in May is 20\u00b0C."},
           3);
  // Line 97 (Mercury_7113890): degree signs and parentheses in the question.
  check_mc(docs[96],
           "Question: Scientists have discovered organisms that thrive in hot water that is "
           "90\u00b0C (194\u00b0F) and do not need sunlight or oxygen to live. Into which kingdom "
           "would the scientists classify these organisms?\nAnswer:",
           {"Archaebacteria", "Fungi", "Plantae", "Protista"}, 0);
  // Line 501 (TIMSS_2003_4_pg35): five choices A-E.
  check_mc(docs[500], "Question: What gas in the air do we need to breathe in order to live?\nAnswer:",
           {"nitrogen", "oxygen", "carbon dioxide", "hydrogen", "water vapor"}, 1);
  // Last line (VASoL_2009_5_34).
  check_mc(docs[2375], "Question: Which part of a sunflower plant absorbs water and nutrients?\nAnswer:",
           {"Roots", "Stems", "Leaves", "Flowers"}, 0);
  for (size_t i = 0; i < docs.size(); ++i) CATCH_REQUIRE(docs[i].index == static_cast<int64_t>(i));
}

CATCH_TEST_CASE("arc_challenge: item count and pinned prompts") {
  auto root = data_root_or_skip();
  if (!root) return;
  const auto docs = load("arc_challenge", *root);
  CATCH_REQUIRE(docs.size() == 1172);
  check_mc(docs[0],
           "Question: An astronomer observes that a planet rotates faster after a meteorite impact. "
           "Which is the most likely effect of this increase in rotation?\nAnswer:",
           {"Planetary density will decrease.", "Planetary years will become longer.",
            "Planetary days will become shorter.", "Planetary gravity will become stronger."},
           2);
  // Line 45 (NYSEDREGENTS_2008_8_34): numeric labels, answerKey "2".
  check_mc(docs[44],
           "Question: Which statement best describes the energy changes that occur while a child is "
           "riding on a sled down a steep, snow-covered hill?\nAnswer:",
           {"Kinetic energy decreases and potential energy increases.",
            "Kinetic energy increases and potential energy decreases.",
            "Both potential energy and kinetic energy decrease.",
            "Both potential energy and kinetic energy increase."},
           1);
  // Line 13 (Mercury_LBS10610): degree signs, "2:00 p.m.?", and "32° F" with a space.
  check_mc(docs[12],
           "Question: The morning temperature in a city is 41\u00b0F. If a sunny, mild day is "
           "forecast, which temperature is most likely for 2:00 p.m.?\nAnswer:",
           {"32\u00b0 F", "41\u00b0 F", "78\u00b0 F", "98\u00b0 F"}, 2);
  check_mc(docs[1171],
           "Question: A ball is thrown downward onto a concrete floor and bounces upward. What "
           "supplies the upward force that makes the ball bounce?\nAnswer:",
           {"the floor", "the pull of gravity", "the air friction on the ball",
            "the person that throws the ball"},
           0);
}

CATCH_TEST_CASE("arc: the hub export in hf_format/ gives the same docs as the official file") {
  auto root = data_root_or_skip();
  if (!root) return;
  for (const std::string set : {"Easy", "Challenge"}) {
    const std::string folder = set == "Easy" ? "arc_easy" : "arc_challenge";
    CATCH_INFO(folder);
    TempRoot tmp;
    const auto hub = *root / folder / "hf_format" / ("ARC-" + set + "-test.jsonl");
    CATCH_REQUIRE(fs::exists(hub));
    fs::create_directories(tmp.path() / folder / "hf_format");
    fs::copy_file(hub, tmp.path() / folder / "hf_format" / hub.filename());
    check_same_docs(load(folder, tmp.path()), load(folder, *root));
  }
}

CATCH_TEST_CASE("arc: hand-converted hub rows at hf_format/test.jsonl, and bad rows") {
  TempRoot tmp;
  // Line 15 of ARC-Easy-Test.jsonl in the allenai/ai2_arc layout.
  tmp.write("arc_easy/hf_format/test.jsonl",
            R"({"id":"NYSEDREGENTS_2015_8_28","question":"All living and nonliving material is composed of","choices":{"text":["air","elements","water","soil"],"label":["1","2","3","4"]},"answerKey":"2"})"
            "\n");
  const auto docs = load("arc_easy", tmp.path());
  CATCH_REQUIRE(docs.size() == 1);
  check_mc(docs[0], "Question: All living and nonliving material is composed of\nAnswer:",
           {"air", "elements", "water", "soil"}, 1);

  tmp.write("arc_easy/hf_format/test.jsonl",
            R"({"id":"x","question":"q","choices":{"text":["a"],"label":["A"]},"answerKey":"B"})"
            "\n");
  CATCH_REQUIRE_THROWS_WITH(load("arc_easy", tmp.path()),
                            Catch::Matchers::Contains("test.jsonl:1: answerKey 'B'"));
  tmp.write("arc_easy/hf_format/test.jsonl",
            R"({"id":"x","question":"q","choices":{"text":["a"],"label":["A"]},"answerKey":"A"})"
            "\n{\"id\": broken\n");
  CATCH_REQUIRE_THROWS_WITH(load("arc_easy", tmp.path()),
                            Catch::Matchers::Contains("test.jsonl:2:"));
}
