// WinoGrande, BoolQ, COPA and SciQ: expected strings typed from the raw lines of the data files,
// following docs/tasks.md, "The tasks" (winogrande partial evaluation, boolq's "?\nAnswer:", COPA's
// connector and double space, SciQ's support.lstrip() and last-choice gold).
#include "tests/evals/tasks/task_test_util.h"

using namespace attnbench::evals;
using namespace attnbench::evals::test;

namespace {
// Partial evaluation: one context per option, one shared continuation, choices = the contexts.
void check_wino(const Doc& doc, const std::vector<std::string>& contexts,
                const std::string& continuation, int gold) {
  CATCH_REQUIRE(doc.requests.size() == 2);
  CATCH_CHECK(doc.choices == contexts);
  for (size_t i = 0; i < 2; ++i) {
    CATCH_CHECK(doc.requests[i].context == contexts[i]);
    CATCH_CHECK(doc.requests[i].continuation == continuation);
  }
  CATCH_CHECK(doc.gold == gold);
}
}  // namespace

CATCH_TEST_CASE("winogrande: item count and pinned partial-evaluation requests") {
  auto root = data_root_or_skip();
  if (!root) return;
  const auto docs = load("winogrande", *root);
  CATCH_REQUIRE(docs.size() == 1267);
  check_wino(docs[0],
             {"Sarah was a much better surgeon than Maria so Sarah",
              "Sarah was a much better surgeon than Maria so Maria"},
             " always got the easier cases.", 1);
  // Line 42: the double space before the blank is part of both contexts.
  check_wino(docs[41],
             {"The man used  his eyes to read the letters but the letters",
              "The man used  his eyes to read the letters but the eyes"},
             " were too small.", 0);
  // Line 157: "_ ." -> the suffix " ." is stripped to "." and the delimiter added back.
  check_wino(docs[156],
             {"The IRS sent Tim a letter informing him of the audit, which could occure at the house "
              "or the office.  Tim chose a comfortable setting of the office",
              "The IRS sent Tim a letter informing him of the audit, which could occure at the house "
              "or the office.  Tim chose a comfortable setting of the house"},
             " .", 1);
  check_wino(docs[1266],
             {"She chose the black car over the green car, because the black car",
              "She chose the black car over the green car, because the green car"},
             " has more brighter color.", 1);
}

CATCH_TEST_CASE("winogrande: hub rows give the same docs, and labels must agree with answer") {
  TempRoot hub;
  hub.write("winogrande/hf_format/validation.jsonl",
            R"({"sentence": "Sarah was a much better surgeon than Maria so _ always got the easier cases.", "option1": "Sarah", "option2": "Maria", "answer": "2"})"
            "\n");
  const auto docs = load("winogrande", hub.path());
  CATCH_REQUIRE(docs.size() == 1);
  check_wino(docs[0],
             {"Sarah was a much better surgeon than Maria so Sarah",
              "Sarah was a much better surgeon than Maria so Maria"},
             " always got the easier cases.", 1);

  // The same hub row saved under the official name loads too (no "qID": no labels file needed).
  TempRoot renamed;
  renamed.write("winogrande/dev.jsonl",
                R"({"sentence": "A _ b.", "option1": "o1", "option2": "o2", "answer": "1"})"
                "\n");
  const auto renamed_docs = load("winogrande", renamed.path());
  CATCH_REQUIRE(renamed_docs.size() == 1);
  check_wino(renamed_docs[0], {"A o1", "A o2"}, " b.", 0);

  TempRoot official;
  official.write("winogrande/dev.jsonl",
                 R"({"qID": "x", "sentence": "A _ b.", "option1": "o1", "option2": "o2", "answer": "2"})"
                 "\n");
  CATCH_REQUIRE_THROWS_WITH(load("winogrande", official.path()),
                            Catch::Matchers::Contains("winogrande/dev-labels.lst"));
  official.write("winogrande/dev-labels.lst", "1\n");
  CATCH_REQUIRE_THROWS_WITH(load("winogrande", official.path()),
                            Catch::Matchers::Contains("dev.jsonl:1: \"answer\" disagrees"));
  official.write("winogrande/dev.jsonl",
                 R"({"qID": "x", "sentence": "no blank", "option1": "o1", "option2": "o2"})"
                 "\n");
  CATCH_REQUIRE_THROWS_WITH(load("winogrande", official.path()),
                            Catch::Matchers::Contains("dev.jsonl:1: sentence has no '_'"));
}

CATCH_TEST_CASE("boolq: item count and pinned prompts") {
  auto root = data_root_or_skip();
  if (!root) return;
  const auto docs = load("boolq", *root);
  CATCH_REQUIRE(docs.size() == 3270);
  check_mc(docs[0],
           "Ethanol fuel -- All biomass goes through at least some of these steps: it needs to be "
           "grown, collected, dried, fermented, distilled, and burned. All of these steps require "
           "resources and an infrastructure. The total amount of energy input into the process "
           "compared to the energy released by burning the resulting ethanol fuel is known as the "
           "energy balance (or ``energy returned on energy invested''). Figures compiled in a 2007 "
           "report by National Geographic Magazine point to modest results for corn ethanol "
           "produced in the US: one unit of fossil-fuel energy is required to create 1.3 energy "
           "units from the resulting ethanol. The energy balance for sugarcane ethanol produced in "
           "Brazil is more favorable, with one unit of fossil-fuel energy required to create 8 from "
           "the ethanol. Energy balance estimates are not easily produced, thus numerous such "
           "reports have been generated that are contradictory. For instance, a separate survey "
           "reports that production of ethanol from sugarcane, which requires a tropical climate to "
           "grow productively, returns from 8 to 9 units of energy for each unit expended, as "
           "compared to corn, which only returns about 1.34 units of fuel energy for each unit of "
           "energy expended. A 2006 University of California Berkeley study, after analyzing six "
           "separate studies, concluded that producing ethanol from corn uses much less petroleum "
           "than producing gasoline.\nQuestion: does ethanol take more energy make that "
           "produces?\nAnswer:",
           {"no", "yes"}, 0);
  CATCH_CHECK(docs[0].requests[0].continuation == " no");
  CATCH_CHECK(docs[0].requests[1].continuation == " yes");
  check_mc(docs[8],
           "American entry into Canada by land -- Persons driving into Canada must have their "
           "vehicle's registration document and proof of insurance.\nQuestion: can u drive in "
           "canada with us license?\nAnswer:",
           {"no", "yes"}, 1);
  // idx 19: `` '' quotes and a colon ratio inside the passage.
  check_mc(docs[19],
           "Magnesium citrate -- Magnesium citrate is a magnesium preparation in salt form with "
           "citric acid in a 1:1 ratio (1 magnesium atom per citrate molecule). The name "
           "``magnesium citrate'' is ambiguous and sometimes may refer to other salts such as "
           "trimagnesium citrate which has a magnesium:citrate ratio of 3:2.\nQuestion: does "
           "magnesium citrate have citric acid in it?\nAnswer:",
           {"no", "yes"}, 1);
  check_mc(docs[3269],
           "List of Shadowhunters episodes -- In April 2017, it was announced that the series had "
           "been renewed for a third season of 20 episodes. The first half of ten episodes "
           "premiered on March 20, 2018. In June 2018, Freeform canceled the series after three "
           "seasons, but ordered two extra episodes to properly conclude the series' story; the "
           "second half of the third season is set to air in early 2019. As of May 15, 2018, 43 "
           "episodes of Shadowhunters have aired, concluding the first half of the third "
           "season.\nQuestion: will there be a season 5 of shadowhunters?\nAnswer:",
           {"no", "yes"}, 0);
}

CATCH_TEST_CASE("boolq: hub rows (label 0/1) give the same docs, and bad labels rejected") {
  TempRoot hub;
  hub.write("boolq/hf_format/validation.jsonl",
            R"({"question": "can u drive in canada with us license", "passage": "American entry into Canada by land -- Persons driving into Canada must have their vehicle's registration document and proof of insurance.", "idx": 8, "label": 1})"
            "\n"
            R"({"question": "q", "passage": "p", "idx": 9, "label": 0})"
            "\n");
  const auto docs = load("boolq", hub.path());
  CATCH_REQUIRE(docs.size() == 2);
  check_mc(docs[0],
           "American entry into Canada by land -- Persons driving into Canada must have their "
           "vehicle's registration document and proof of insurance.\nQuestion: can u drive in "
           "canada with us license?\nAnswer:",
           {"no", "yes"}, 1);
  check_mc(docs[1], "p\nQuestion: q?\nAnswer:", {"no", "yes"}, 0);
  hub.write("boolq/hf_format/validation.jsonl",
            R"({"question": "q", "passage": "p", "idx": 9, "label": "maybe"})"
            "\n");
  CATCH_REQUIRE_THROWS_WITH(load("boolq", hub.path()), Catch::Matchers::Contains("validation.jsonl:1"));
}

CATCH_TEST_CASE("copa: item count, connectors and the double space") {
  auto root = data_root_or_skip();
  if (!root) return;
  const auto docs = load("copa", *root);
  CATCH_REQUIRE(docs.size() == 100);
  // idx 0, "effect": premise without its final '.', + " therefore"; choices lower-cased first
  // letter with a leading space; the target delimiter adds a second space.
  check_mc(docs[0], "The man turned on the faucet therefore",
           {" the toilet filled with water.", " water flowed from the spout."}, 1);
  CATCH_CHECK(docs[0].requests[0].continuation == "  the toilet filled with water.");
  CATCH_CHECK(docs[0].requests[1].continuation == "  water flowed from the spout.");
  check_mc(docs[4], "The hamburger meat browned because",
           {" the cook froze it.", " the cook grilled it."}, 1);
  check_mc(docs[6], "I decided to stay home for the night because",
           {" the forecast called for storms.", " my friends urged me to go out."}, 0);
  CATCH_CHECK(docs[6].requests[1].continuation == "  my friends urged me to go out.");
  check_mc(docs[99], "The woman was in a bad mood therefore",
           {" she engaged in small talk with her friend.", " she told her friend to leave her alone."},
           1);
}

CATCH_TEST_CASE("copa: hub rows give the same docs, and premise.strip()[:-1] drops one code point") {
  TempRoot hub;
  hub.write("copa/hf_format/validation.jsonl",
            R"({"premise": "The hamburger meat browned.", "choice1": "The cook froze it.", "choice2": "The cook grilled it.", "question": "cause", "label": 1, "idx": 4})"
            "\n"
            R"({"premise": "  Caf\u00e9 \u00e9 \n", "choice1": "X", "choice2": "y", "question": "effect", "label": 0, "idx": 5})"
            "\n");
  const auto docs = load("copa", hub.path());
  CATCH_REQUIRE(docs.size() == 2);
  check_mc(docs[0], "The hamburger meat browned because", {" the cook froze it.", " the cook grilled it."},
           1);
  // "Café é".strip()[:-1] = "Café " (the two-byte é is one character).
  check_mc(docs[1], "Caf\u00e9  therefore", {" x", " y"}, 0);
}

CATCH_TEST_CASE("sciq: item count and pinned prompts") {
  auto root = data_root_or_skip();
  if (!root) return;
  const auto docs = load("sciq", *root);
  CATCH_REQUIRE(docs.size() == 1000);
  check_mc(docs[0],
           "Oxidants and Reductants Compounds that are capable of accepting electrons, such as O 2 "
           "or F2, are calledoxidants (or oxidizing agents) because they can oxidize other "
           "compounds. In the process of accepting electrons, an oxidant is reduced. Compounds that "
           "are capable of donating electrons, such as sodium metal or cyclohexane (C6H12), are "
           "calledreductants (or reducing agents) because they can cause the reduction of another "
           "compound. In the process of donating electrons, a reductant is oxidized. These "
           "relationships are summarized in Equation 3.30: Equation 3.30 Saylor URL: http://www. "
           "saylor. org/books.\nQuestion: Compounds that are capable of accepting electrons, such "
           "as o 2 or f2, are called what?\nAnswer:",
           {"antioxidants", "Oxygen", "residues", "oxidants"}, 3);
  // Element 35: empty support, so the context starts with the newline.
  check_mc(docs[35],
           "\nQuestion: In what type of animals may a body cavity be present or absent?\nAnswer:",
           {"vertebrate", "bicellular", "nonvascular", "triploblastic"}, 3);
  check_mc(docs[999],
           "On land, sulfur is deposited in four major ways: precipitation, direct fallout from the "
           "atmosphere, rock weathering, and geothermal vents (Figure 20.17). Atmospheric sulfur is "
           "found in the form of sulfur dioxide (SO2), and as rain falls through the atmosphere, "
           "sulfur is dissolved in the form of weak sulfuric acid (H2SO4). Sulfur can also fall "
           "directly from the atmosphere in a process called fallout. Also, as sulfur-containing "
           "rocks weather, sulfur is released into the soil. These rocks originate from ocean "
           "sediments that are moved to land by the geologic uplifting of ocean sediments. "
           "Terrestrial ecosystems can then make use of these soil sulfates (SO42-), which enter "
           "the food web by being taken up by plant roots. When these plants decompose and die, "
           "sulfur is released back into the atmosphere as hydrogen sulfide (H2S) gas.\nQuestion: "
           "In what form is atmospheric sulfur found?\nAnswer:",
           {"formaldehyde", "sulfuric acid", "sulfur monoxide", "sulfur dioxide (so2)"}, 3);
}

CATCH_TEST_CASE("sciq: hub JSONL rows give the same docs, and support is lstripped") {
  TempRoot hub;
  hub.write("sciq/hf_format/test.jsonl",
            R"({"question": "In what type of animals may a body cavity be present or absent?", "distractor3": "nonvascular", "distractor1": "vertebrate", "distractor2": "bicellular", "correct_answer": "triploblastic", "support": ""})"
            "\n"
            R"({"question": "Q?", "distractor3": "c", "distractor1": "a", "distractor2": "b", "correct_answer": "d", "support": " \n\u00a0Support text. "})"
            "\n");
  const auto docs = load("sciq", hub.path());
  CATCH_REQUIRE(docs.size() == 2);
  check_mc(docs[0],
           "\nQuestion: In what type of animals may a body cavity be present or absent?\nAnswer:",
           {"vertebrate", "bicellular", "nonvascular", "triploblastic"}, 3);
  // lstrip() removes the leading space, newline and no-break space, keeps the trailing space.
  check_mc(docs[1], "Support text. \nQuestion: Q?\nAnswer:", {"a", "b", "c", "d"}, 3);
}
