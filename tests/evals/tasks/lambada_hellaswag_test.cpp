// LAMBADA and HellaSwag: expected strings typed from the raw lines of lambada_test.jsonl and
// hellaswag_val_full.txt, following docs/tasks.md, "The tasks" (lambada's last-space split,
// HellaSwag's utils.py) and the repairs of the text form described in docs/tasks.md.
#include "tests/evals/tasks/task_test_util.h"

#include "evals/tasks/hellaswag.h"

using namespace attnbench::evals;
using namespace attnbench::evals::test;

namespace {
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}
}  // namespace

CATCH_TEST_CASE("lambada_openai: item count and pinned context/target splits") {
  auto root = data_root_or_skip();
  if (!root) return;
  const auto docs = load("lambada_openai", *root);
  CATCH_REQUIRE(docs.size() == 5153);
  for (const auto& d : docs) CATCH_REQUIRE(d.requests.size() == 1);
  CATCH_CHECK(docs[0].requests[0].context ==
              "In my palm is a clear stone, and inside it is a small ivory statuette. A guardian "
              "angel.\n\n\"Figured if you're going to be out at night getting hit by cars, you might "
              "as well have some backup.\"\n\nI look at him, feeling stunned. Like this is some sort "
              "of sign. But as I stare at Harlin, his mouth curved in a confident grin, I don't care "
              "about");
  CATCH_CHECK(docs[0].requests[0].continuation == " signs");
  CATCH_CHECK(docs[0].choices.empty());
  // Item 426: split(' ') is on single spaces only, so the newlines stay inside the target.
  CATCH_CHECK(ends_with(docs[426].requests[0].context,
                        "\"It sure looked like blue fire. And it certainly was some kind"));
  CATCH_CHECK(docs[426].requests[0].continuation == " of\n\nPower");
  // Last item: curly quotes, and "cute. \n" keeps its space-newline inside the context.
  CATCH_CHECK(docs[5152].requests[0].context ==
              "\u201cYes, Grandmother, and don\u2019t worry, I won\u2019t forget my water when I go "
              "wander.\u201d\nHer brothers laughed a little only because the comment was so cute. "
              "\n\u201cWonderful my little Wanderer, because I would hate to think of you "
              "forgetting an important rule like that.\u201d\n\u201cI would never forget the rules,");
  CATCH_CHECK(docs[5152].requests[0].continuation == " Grandmother");
}

CATCH_TEST_CASE("lambada_openai: hub rows, and a text without a space has an empty context") {
  TempRoot hub;
  hub.write("lambada_openai/hf_format/test.jsonl",
            "{\"text\": \"one two  three\"}\n{\"text\": \"alone\"}\n{\"text\": \"trailing \"}\n");
  const auto docs = load("lambada_openai", hub.path());
  CATCH_REQUIRE(docs.size() == 3);
  CATCH_CHECK(docs[0].requests[0].context == "one two ");  // "one two  three".split(' ')[:-1]
  CATCH_CHECK(docs[0].requests[0].continuation == " three");
  CATCH_CHECK(docs[1].requests[0].context == "");
  CATCH_CHECK(docs[1].requests[0].continuation == " alone");
  CATCH_CHECK(docs[2].requests[0].context == "trailing");
  CATCH_CHECK(docs[2].requests[0].continuation == " ");
}

CATCH_TEST_CASE("hellaswag: lm-eval's preprocess and query, worked by hand") {
  // strip; " [title]" -> ". "; [...] removed (never across a newline); one pass of "  " -> " ".
  // strip() runs BEFORE the tags are removed, so a leading or trailing tag leaves its space.
  CATCH_CHECK(hellaswag_preprocess("  [header] How to x [title] Do y. [step] Z  ") ==
              " How to x. Do y. Z");
  CATCH_CHECK(hellaswag_preprocess("[step] Water changes state.") == " Water changes state.");
  CATCH_CHECK(hellaswag_preprocess("Done. [step]") == "Done. ");
  CATCH_CHECK(hellaswag_preprocess("Done [title]") == "Done. ");
  CATCH_CHECK(hellaswag_preprocess("a   b") == "a  b");  // Python's replace is one pass
  CATCH_CHECK(hellaswag_preprocess("a [b\n] c") == "a [b\n] c");
  CATCH_CHECK(hellaswag_preprocess("putting [a [your name] right") == "putting right");
  CATCH_CHECK(hellaswag_preprocess("tap the \" [\" button") == "tap the \" [\" button");
  // ctx_b.capitalize() lower-cases the rest of ctx_b too.
  CATCH_CHECK(hellaswag_query("Roof shingle removal", "A man is sitting on a roof.", "he") ==
              "Roof shingle removal: A man is sitting on a roof. He");
  CATCH_CHECK(hellaswag_query("Label", "First. ", "the Man in RED") ==
              "Label: First. The man in red");
  CATCH_CHECK(hellaswag_query("Label", "Only ctx_a.", "") == "Label: Only ctx_a.");
}

CATCH_TEST_CASE("hellaswag: item count and pinned queries restored from the text form") {
  auto root = data_root_or_skip();
  if (!root) return;
  const auto docs = load("hellaswag", *root);
  CATCH_REQUIRE(docs.size() == 10042);
  // Item 0 (lines 1-6): ctx_b "he" is capitalised.
  check_mc(docs[0], "Roof shingle removal: A man is sitting on a roof. He",
           {"is using wrap to wrap a pair of skis.", "is ripping level tiles off.",
            "is holding a rubik's cube.", "starts pulling up roofing on a roof."},
           3);
  CATCH_CHECK(docs[0].requests[3].continuation == " starts pulling up roofing on a roof.");
  // Item 1 (lines 7-12): a two-word ctx_b after two ctx_a sentences.
  check_mc(docs[1],
           "Clean and jerk: A lady walks to a barbell. She bends down and grabs the pole. The lady",
           {"swings and lands in her arms.", "pulls the barbell forward.",
            "pulls a rope attached to the barbell.", "stands and lifts the weight over her head."},
           3);
  // Item 1693 (lines 10159-10164): quotes earlier in the context; ctx_b after the last ". ".
  check_mc(docs[1693],
           "Layup drill in basketball: Young men play basketball in an indoor court and \"how to do "
           "a spin move in basketball\" overlays the video. \"power dribble\" overlays video of the "
           "players demonstrating the steps of doing it. A recap of the steps",
           {"to practice basketball are shown.", "involved in dribble on basketball.",
            "include the use of the dribbling cell phone, and the process of receiving battery "
            "spares and credits.",
            "is shown in a smaller window."},
           3);
  // Item 3505 (lines 21031-21036): "[www.kiddio.org]" survived the text form; lm-eval removes it
  // and collapses the double space left behind.
  check_mc(docs[3505],
           "Family Life: How to entertain a toddler. Ask the toddler what he or she would like to do "
           "instead of doing what you would like to do.. Visit a site like to find loads of creative "
           "activities for toddlers and preschoolers.. Choose small, simple games like candy land "
           "or chutes and ladders.",
           {"Make sure you get a computer or tablet in case the toddler wants to do some general "
            "stuff. And maybe ask to go get a snack or an xbox or wii.",
            "Try some arts and crafts like washable paints, little foamies, crayons, and paper.. "
            "Watch the toddler's favorite movie, even if it's barney, and even if he or she has seen "
            "it 20 times before.",
            "Make sure the kid you are babysitting is old enough to handle various household chores "
            "or housework. Little kids will have a difficult time holding objects and will have "
            "precious time learning any new skill.",
            "If you discover that your toddler likes archery or fishing, create activities around "
            "these games as well. Alternatively, make small squares and place them around the "
            "toddler."},
           1);
  // Item 4041 (line 24249): an ending's "[find a good attorney | ...]" is removed.
  CATCH_CHECK(docs[4041].choices[0] ==
              "If you can afford a local attorney who knows the types of things your judge favors "
              "and disfavors, it would be best to hire one. See .");
  // Item 3691 (line 22151): a '[' with no ']' after it stays.
  CATCH_CHECK(docs[3691].choices[2] ==
              "You may be prompted to upgrade when you launch notes for the first time after "
              "upgrading to ios 9. If you're not, tap the \" [\" button to view the folder screen, "
              "then tap the \" upgrade \" button in the corner.");
  // Last item (lines 60247-60252): the context ends a sentence, so there is no ctx_b to repair.
  check_mc(docs[10041],
           "Family Life: How to tell if your teen is being abused. Pay attention to your teen "
           "dressing inappropriately. If you suspect that your teen is being beaten by someone in "
           "their life, you will want to pay close attention to their dress code. While all teens "
           "have different styles and preferences, be on the lookout for any clothing that is out "
           "of the norm for your child.",
           {"Try to figure out why they are dressing something that is frowned upon.. Understand "
            "why your child is acting different.",
            "Read the following as a rule for determining your teen's behaviour. You may notice "
            "your teen dressing in odd outfits that could indicate that they are on a date.",
            "For instance, your teen may try to hide the signs of abuse (e.g. scratches, burns, "
            "bruises, bite marks, broken bones, etc.",
            "Ask your teen if they have black tights (with stripper straps) or baggy jeans "
            "(without strippers straps). The more comfortably you can be around your teenager, the "
            "better."},
           2);
}

CATCH_TEST_CASE("hellaswag: hub rows (Rowan/hellaswag fields) give the same docs") {
  auto root = data_root_or_skip();
  if (!root) return;
  const auto official = load("hellaswag", *root);
  // Items 0 and 3505 written back into the hub's raw fields (ctx_a/ctx_b split, WikiHow tags).
  TempRoot hub;
  hub.write("hellaswag/hf_format/validation.jsonl",
            R"({"ind": 24, "activity_label": "Roof shingle removal", "ctx_a": "A man is sitting on a roof.", "ctx_b": "he", "ctx": "A man is sitting on a roof. he", "endings": ["is using wrap to wrap a pair of skis.", "is ripping level tiles off.", "is holding a rubik's cube.", "starts pulling up roofing on a roof."], "source_id": "activitynet~v_-JhWjGDPHMY", "split": "val", "split_type": "indomain", "label": "3"})"
            "\n"
            R"({"ind": 1, "activity_label": "Family Life", "ctx_a": "[header] How to entertain a toddler [title] Ask the toddler what he or she would like to do instead of doing what you would like to do. [title] Visit a site like [www.kiddio.org] to find loads of creative activities for toddlers and preschoolers. [title] Choose small, simple games like candy land or chutes and ladders.", "ctx_b": "", "ctx": "", "endings": ["Make sure you get a computer or tablet in case the toddler wants to do some general stuff. And maybe ask to go get a snack or an xbox or wii.", "Try some arts and crafts like washable paints, little foamies, crayons, and paper. [title] Watch the toddler's favorite movie, even if it's barney, and even if he or she has seen it 20 times before.", "Make sure the kid you are babysitting is old enough to handle various household chores or housework. Little kids will have a difficult time holding objects and will have precious time learning any new skill.", "If you discover that your toddler likes archery or fishing, create activities around these games as well. [substeps] Alternatively, make small squares and place them around the toddler."], "source_id": "wikihow~x", "split": "val", "split_type": "indomain", "label": "1"})"
            "\n");
  const auto docs = load("hellaswag", hub.path());
  CATCH_REQUIRE(docs.size() == 2);
  std::vector<Doc> expected = {official[0], official[3505]};
  expected[1].index = 1;
  check_same_docs(docs, expected);
}

CATCH_TEST_CASE("hellaswag: the text form carries a data note, the hub export none") {
  const auto& spec = find_task("hellaswag");
  CATCH_REQUIRE(static_cast<bool>(spec.data_note));
  TempRoot text_form;
  text_form.write("hellaswag/hellaswag_val_full.txt", "L: a. b\n0\ne1\ne2\ne3\ne4\n");
  CATCH_CHECK_THAT(spec.data_note(text_form.path()), Catch::Matchers::Contains("text form"));
  const auto docs = load("hellaswag", text_form.path());
  CATCH_REQUIRE(docs.size() == 1);
  check_mc(docs[0], "L: a. B", {"e1", "e2", "e3", "e4"}, 0);
  TempRoot hub;
  hub.write("hellaswag/hf_format/validation.jsonl", "{}\n");
  CATCH_CHECK(spec.data_note(hub.path()).empty());
  // Every other task loads exact prompts from either layout.
  for (const auto& name : task_names()) {
    if (name != "hellaswag") CATCH_CHECK(!find_task(name).data_note);
  }
}
