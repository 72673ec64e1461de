// Sweep expansion (docs/sweeps.md): grid/zip/include/exclude/seeds, run ids, and the errors a
// user gets before any work starts.
#include <torch/torch.h>  // before catch.hpp (docs/toolchain.md: glog's CHECK)

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <unistd.h>

#include "harness/sweep/expand.h"
#include "harness/sweep/sweep_file.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace expand_test {

namespace fs = std::filesystem;
using namespace attnbench;
using Catch::Matchers::Contains;

namespace {

// A fresh folder per use, holding a base config and the sweep files a test writes.
struct Dir {
  fs::path path;
  Dir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("attnbench-test-sweep-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path / "presets");
    write("presets/base.toml",
          "[model]\npreset = \"tiny\"\ncontext_length = 32\n\n"
          "[attention]\nvariant = \"softmax\"\n\n"
          "[train]\nsteps = 20\nlr = 1e-3\n");
  }
  ~Dir() { fs::remove_all(path); }
  fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return path / name;
  }
  sweep::Expansion expand(const std::string& body, const std::string& name = "s.toml") const {
    return sweep::expand(sweep::parse_sweep_file(write(name, header() + body)));
  }
  static std::string header() {
    return "[sweep]\nname = \"t\"\nbase = \"presets/base.toml\"\n";  // lines 1-3
  }
};

std::vector<std::string> labels(const sweep::Expansion& e) {
  std::vector<std::string> out;
  for (auto& c : e.cells) out.push_back(c.label);
  return out;
}

std::set<std::string> ids(const sweep::Expansion& e) {
  std::set<std::string> out;
  for (auto& c : e.cells) out.insert(c.id);
  return out;
}

// The message of the InputError `f` throws (fails the test when it throws nothing).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  CATCH_FAIL("expected an InputError");
  return "";
}

}  // namespace

CATCH_TEST_CASE("grid is the cartesian product, first key outermost, seeds innermost") {
  Dir d;
  auto e = d.expand(
      "seeds = [0, 1]\n"
      "[grid]\n"
      "\"attention.variant\" = [\"softmax\", \"alibi\", \"lazy\"]\n"
      "\"train.lr\" = [1e-3, 3e-4]\n");
  CATCH_REQUIRE(e.cells.size() == 3 * 2 * 2);
  CATCH_CHECK(e.combinations == 6);
  CATCH_CHECK(e.excluded == 0);
  CATCH_CHECK(ids(e).size() == 12);
  CATCH_CHECK(e.cells[0].label == "variant=softmax lr=0.001 seed=0");
  CATCH_CHECK(e.cells[1].label == "variant=softmax lr=0.001 seed=1");
  CATCH_CHECK(e.cells[2].label == "variant=softmax lr=0.0003 seed=0");
  CATCH_CHECK(e.cells[11].label == "variant=lazy lr=0.0003 seed=1");
  CATCH_CHECK(e.cells[11].config.attention.variant == "lazy");
  CATCH_CHECK(e.cells[11].config.train.lr == 3e-4);  // parsed from the same literal
  CATCH_CHECK(e.cells[11].config.train.seed == 1);
  // Base values the sweep does not touch survive in every cell.
  for (auto& c : e.cells) {
    CATCH_CHECK(c.config.model.context_length == 32);
    CATCH_CHECK(c.config.train.steps == 20);
  }
}

CATCH_TEST_CASE("nested [grid.section] tables are the same as dotted keys") {
  Dir d;
  auto dotted = d.expand("[grid]\n\"train.lr\" = [1e-3, 3e-4]\n\"train.steps\" = [10, 20]\n", "a.toml");
  auto nested = d.expand("[grid.train]\nlr = [1e-3, 3e-4]\nsteps = [10, 20]\n", "b.toml");
  CATCH_CHECK(labels(dotted) == labels(nested));
  CATCH_CHECK(ids(dotted) == ids(nested));
}

CATCH_TEST_CASE("zip lists vary together and multiply with the grid") {
  Dir d;
  auto e = d.expand(
      "[grid]\n\"attention.variant\" = [\"softmax\", \"lazy\"]\n"
      "[[zip]]\n\"train.lr\" = [1e-3, 2e-3, 3e-3]\n\"train.warmup_steps\" = [1, 2, 3]\n");
  CATCH_REQUIRE(e.cells.size() == 2 * 3);
  std::map<double, int64_t> pairs;
  for (auto& c : e.cells) pairs[c.config.train.lr] = c.config.train.warmup_steps;
  CATCH_CHECK(pairs.size() == 3);
  CATCH_CHECK(pairs[1e-3] == 1);
  CATCH_CHECK(pairs[2e-3] == 2);
  CATCH_CHECK(pairs[3e-3] == 3);
}

CATCH_TEST_CASE("zip lists of unequal length are an error at the shorter list") {
  Dir d;
  auto msg = error_of([&] {
    d.expand("[[zip]]\n\"train.lr\" = [1e-3, 2e-3]\n\"train.warmup_steps\" = [1, 2, 3]\n");
  });
  CATCH_CHECK_THAT(msg, Contains("s.toml:6:") && Contains("equal lengths") &&
                            Contains("train.warmup_steps"));
}

CATCH_TEST_CASE("exclude drops matching cells, include adds cells on top of base") {
  Dir d;
  auto e = d.expand(
      "seeds = [0, 1, 2]\n"
      "[grid]\n\"attention.variant\" = [\"elastic\", \"lazy\"]\n"
      "\"attention.renormalize\" = [false, true]\n"
      "\"attention.tau_init\" = [-1, 0]\n"
      "[[exclude]]\n\"attention.variant\" = \"elastic\"\n\"attention.tau_init\" = 0.0\n"
      "[[include]]\n\"attention.variant\" = \"softmax\"\n"
      "[[include]]\n\"attention.variant\" = \"alibi\"\n");
  // 2*2*2 = 8 combinations, 2 excluded (elastic, tau_init 0: both renormalize values), 2 includes;
  // times 3 seeds.
  CATCH_CHECK(e.combinations == 8);
  CATCH_CHECK(e.excluded == 2);
  CATCH_REQUIRE(e.cells.size() == (8 - 2 + 2) * 3);
  size_t included = 0;
  for (auto& c : e.cells) {
    CATCH_CHECK_FALSE((c.config.attention.variant == "elastic" &&
                       c.config.attention.get_float("tau_init") == 0.0));
    if (c.included) {
      ++included;
      CATCH_CHECK((c.config.attention.variant == "softmax" || c.config.attention.variant == "alibi"));
      // Elastic parameters do not apply to softmax: the label shows only what the cell sets.
      CATCH_CHECK(c.label.find("renormalize") == std::string::npos);
    }
  }
  CATCH_CHECK(included == 2 * 3);
  CATCH_CHECK(e.cells.back().label == "variant=alibi seed=2");
}

CATCH_TEST_CASE("exclude with a list matches any of its values") {
  Dir d;
  auto e = d.expand(
      "[grid]\n\"attention.variant\" = [\"softmax\", \"alibi\", \"lazy\"]\n"
      "\"train.lr\" = [1e-3, 3e-4]\n"
      "[[exclude]]\n\"attention.variant\" = [\"softmax\", \"alibi\"]\n\"train.lr\" = 3e-4\n");
  CATCH_CHECK(e.cells.size() == 4);
  CATCH_CHECK(e.excluded == 2);
}

CATCH_TEST_CASE("include/exclude keys and values must match what the grid varies") {
  Dir d;
  auto typo_key = error_of([&] {
    d.expand("[grid]\n\"train.lr\" = [1e-3, 3e-4]\n[[exclude]]\n\"train.lrr\" = 1e-3\n");
  });
  CATCH_CHECK_THAT(typo_key, Contains("s.toml:7:1") && Contains("did you mean 'train.lr'"));
  auto include_key = error_of([&] {
    d.expand("[grid]\n\"train.lr\" = [1e-3, 3e-4]\n[[include]]\n\"train.steps\" = 5\n");
  });
  CATCH_CHECK_THAT(include_key, Contains("s.toml:7:1") && Contains("train.steps"));
  auto typo_value = error_of([&] {
    d.expand("[grid]\n\"attention.variant\" = [\"softmax\", \"lazy\"]\n"
             "[[exclude]]\n\"attention.variant\" = \"lazzy\"\n");
  });
  CATCH_CHECK_THAT(typo_value, Contains("s.toml:7:") && Contains("did you mean 'lazy'"));
  auto matches_nothing = error_of([&] {
    d.expand("[[zip]]\n\"train.lr\" = [1e-3, 3e-4]\n\"train.steps\" = [10, 20]\n"
             "[[exclude]]\n\"train.lr\" = 1e-3\n\"train.steps\" = 20\n");
  });
  CATCH_CHECK_THAT(matches_nothing, Contains("s.toml:7:") && Contains("matches no grid combination"));
}

CATCH_TEST_CASE("seeds set train.seed of every cell, and only there") {
  Dir d;
  auto e = d.expand("seeds = [7, 3]\n");
  CATCH_REQUIRE(e.cells.size() == 2);
  CATCH_CHECK(e.cells[0].config.train.seed == 7);
  CATCH_CHECK(e.cells[1].config.train.seed == 3);
  CATCH_CHECK(e.cells[0].label == "seed=7");
  CATCH_CHECK(e.cells[0].id != e.cells[1].id);

  auto no_seeds = d.expand("", "n.toml");
  CATCH_REQUIRE(no_seeds.cells.size() == 1);
  CATCH_CHECK(no_seeds.cells[0].label == "base");
  CATCH_CHECK(no_seeds.cells[0].config.train.seed == 0);  // the base's (default) seed

  auto twice = error_of([&] { d.expand("seeds = [1]\n[grid]\n\"train.seed\" = [1, 2]\n", "x.toml"); });
  CATCH_CHECK_THAT(twice, Contains("x.toml:6:1") && Contains("[sweep] seeds"));
}

CATCH_TEST_CASE("run ids do not depend on the order of keys in the files") {
  Dir d;
  d.write("presets/reordered.toml",
          "[train]\nlr = 1e-3\nsteps = 20\n\n"
          "[attention]\nvariant = \"softmax\"\n\n"
          "[model]\ncontext_length = 32\npreset = \"tiny\"\n");
  auto a = sweep::expand(sweep::parse_sweep_file(d.write("a.toml",
      Dir::header() + "seeds = [0, 1]\n[grid]\n\"attention.variant\" = [\"softmax\", \"lazy\"]\n"
                      "\"train.warmup_steps\" = [5, 10]\n")));
  auto b = sweep::expand(sweep::parse_sweep_file(d.write("b.toml",
      "[grid]\n\"train.warmup_steps\" = [10, 5]\n\"attention.variant\" = [\"lazy\", \"softmax\"]\n"
      "[sweep]\nseeds = [1, 0]\nbase = \"presets/reordered.toml\"\nname = \"t\"\n")));
  CATCH_REQUIRE(a.cells.size() == 8);
  CATCH_CHECK(ids(a) == ids(b));
  // Labels follow each file's own key order, so compare cells through their configs instead.
  for (auto& ca : a.cells) {
    bool found = false;
    for (auto& cb : b.cells) {
      if (cb.id != ca.id) continue;
      found = true;
      CATCH_CHECK(cb.config.attention.variant == ca.config.attention.variant);
      CATCH_CHECK(cb.config.train.warmup_steps == ca.config.train.warmup_steps);
      CATCH_CHECK(cb.config.train.seed == ca.config.train.seed);
    }
    CATCH_CHECK(found);
  }
}

CATCH_TEST_CASE("every semantic change gives a different run id") {
  Dir d;
  auto base = d.expand("", "base.toml").cells.at(0).id;
  const std::vector<std::string> changes = {
      "\"train.lr\" = [2e-3]",           "\"train.steps\" = [21]",
      "\"train.seed\" = [1]",            "\"model.context_length\" = [64]",
      "\"model.n_layer\" = [1]",         "\"attention.variant\" = [\"alibi\"]",
      "\"attention.normalizer\" = [\"elastic\"]", "\"data.train\" = [\"other/*.bin\"]",
      "\"train.weight_decay\" = [0.0]",  "\"model.tie_embeddings\" = [true]"};
  std::set<std::string> seen = {base};
  for (size_t i = 0; i < changes.size(); ++i) {
    auto e = d.expand("[grid]\n" + changes[i] + "\n", "c" + std::to_string(i) + ".toml");
    CATCH_INFO(changes[i]);
    CATCH_CHECK(seen.insert(e.cells.at(0).id).second);
  }
  // Parameters of the elastic normaliser change the id once they apply.
  auto e = d.expand("[grid]\n\"attention.variant\" = [\"lazy\"]\n"
                    "\"attention.tau_init\" = [-1, 0]\n\"attention.renormalize\" = [false, true]\n"
                    "\"attention.tau_form\" = [\"per_head_over_len\", \"per_token\"]\n", "lazy.toml");
  CATCH_CHECK(ids(e).size() == 8);
}

CATCH_TEST_CASE("cells that resolve to the same run are an error naming both") {
  Dir d;
  // renormalize does not apply to softmax: its two cells are one run.
  auto msg = error_of([&] {
    d.expand("[grid]\n\"attention.variant\" = [\"softmax\", \"lazy\"]\n"
             "\"attention.renormalize\" = [false, true]\n");
  });
  CATCH_CHECK_THAT(msg, Contains("'variant=softmax renormalize=false' and "
                                 "'variant=softmax renormalize=true'") &&
                            Contains("[[exclude]]"));
  // An execution-only key never changes the id either.
  auto backend = error_of([&] { d.expand("[grid]\n\"attention.backend\" = [\"eager\", \"fused\"]\n", "b.toml"); });
  CATCH_CHECK_THAT(backend, Contains("backend=eager") && Contains("backend=fused"));
  // An include that repeats a grid cell collides with it.
  auto repeat = error_of([&] {
    d.expand("[grid]\n\"attention.variant\" = [\"softmax\", \"lazy\"]\n"
             "[[include]]\n\"attention.variant\" = \"lazy\"\n", "r.toml");
  });
  CATCH_CHECK_THAT(repeat, Contains("same run config"));
  // The fix the message suggests works.
  auto fixed = d.expand("[grid]\n\"attention.variant\" = [\"softmax\", \"lazy\"]\n"
                        "\"attention.renormalize\" = [false, true]\n"
                        "[[exclude]]\n\"attention.variant\" = \"softmax\"\n"
                        "\"attention.renormalize\" = true\n", "f.toml");
  CATCH_CHECK(fixed.cells.size() == 3);
}

CATCH_TEST_CASE("a sweep whose cells are all excluded is an error") {
  Dir d;
  auto msg = error_of([&] {
    d.expand("[grid]\n\"attention.variant\" = [\"softmax\", \"lazy\"]\n"
             "[[exclude]]\n\"attention.variant\" = [\"softmax\", \"lazy\"]\n");
  });
  CATCH_CHECK_THAT(msg, Contains("no cells"));
}

CATCH_TEST_CASE("unknown keys point at file:line:col with the nearest valid key") {
  Dir d;
  auto grid_key = error_of([&] { d.expand("[grid]\n\"train.lrr\" = [1e-3]\n"); });
  CATCH_CHECK_THAT(grid_key, Contains("s.toml:5:1") && Contains("did you mean 'lr'"));
  auto attention_key = error_of([&] { d.expand("[grid]\n\"attention.tau_innit\" = [0]\n"); });
  CATCH_CHECK_THAT(attention_key, Contains("s.toml:5:1") && Contains("did you mean 'tau_init'"));
  auto sweep_key = error_of([&] { d.expand("sedes = [1]\n"); });
  CATCH_CHECK_THAT(sweep_key, Contains("s.toml:4:1") && Contains("did you mean 'seeds'"));
  auto section = error_of([&] { d.expand("[grd]\n\"train.lr\" = [1e-3]\n"); });
  CATCH_CHECK_THAT(section, Contains("s.toml:4:") && Contains("did you mean 'grid'"));
  auto data_key = error_of([&] { d.expand("data = { trian = \"x.bin\" }\n"); });
  CATCH_CHECK_THAT(data_key, Contains("s.toml:4:") && Contains("did you mean 'train'"));
  // A bad value is blamed on the value in the sweep file.
  auto value = error_of([&] { d.expand("[grid]\n\"train.lr\" = [1e-3, -1.0]\n"); });
  CATCH_CHECK_THAT(value, Contains("s.toml:5:21") && Contains("train.lr"));
  // A bad base config is blamed on the base file.
  d.write("presets/bad.toml", "[train]\nstepz = 3\n");
  auto base = error_of([&] {
    sweep::expand(sweep::parse_sweep_file(
        d.write("b.toml", "[sweep]\nname = \"t\"\nbase = \"presets/bad.toml\"\n")));
  });
  CATCH_CHECK_THAT(base, Contains("bad.toml:2:") && Contains("did you mean 'steps'"));
  auto syntax = error_of([&] { d.expand("[grid\n"); });
  CATCH_CHECK_THAT(syntax, Contains("s.toml:4:"));
}

CATCH_TEST_CASE("find_cell accepts a run id, a unique id prefix or a label") {
  Dir d;
  auto e = d.expand("seeds = [0, 1]\n");
  const auto& c = e.cells[1];
  CATCH_CHECK(&sweep::find_cell(e, c.id) == &c);
  CATCH_CHECK(&sweep::find_cell(e, c.id.substr(0, 8)) == &c);
  CATCH_CHECK(&sweep::find_cell(e, "seed=1") == &c);
  CATCH_CHECK_THROWS_AS(sweep::find_cell(e, "seed=2"), UsageError);
}

CATCH_TEST_CASE("one-value grid keys fix a setting for every cell, included ones too") {
  Dir d;
  auto e = d.expand(
      "[grid]\n\"attention.variant\" = [\"elastic\", \"lazy\"]\n\"train.steps\" = [7]\n"
      "[[include]]\n\"attention.variant\" = \"softmax\"\n"
      "[[include]]\n\"attention.variant\" = \"alibi\"\n\"train.steps\" = 9\n");
  CATCH_REQUIRE(e.cells.size() == 4);
  CATCH_CHECK(e.cells[0].config.train.steps == 7);
  CATCH_CHECK(e.cells[1].config.train.steps == 7);
  CATCH_CHECK(e.cells[2].config.attention.variant == "softmax");
  CATCH_CHECK(e.cells[2].config.train.steps == 7);
  CATCH_CHECK(e.cells[3].config.train.steps == 9);  // the include's own value wins
  CATCH_CHECK(e.cells[3].label == "variant=alibi steps=9");
}

CATCH_TEST_CASE("the sweep's tasks and limit go into each cell's [eval], not into its run id") {
  Dir d;
  auto plain = d.expand("", "a.toml");
  auto scored = d.expand("tasks = [\"piqa\", \"copa\"]\nlimit = 10\n", "b.toml");
  CATCH_CHECK(plain.cells.at(0).id == scored.cells.at(0).id);
  CATCH_CHECK(scored.cells[0].config.eval.tasks == std::vector<std::string>{"piqa", "copa"});
  CATCH_CHECK(scored.cells[0].config.eval.limit == 10);
  auto unknown = error_of([&] { d.expand("tasks = [\"piqa\", \"pica\"]\n", "c.toml"); });
  CATCH_CHECK_THAT(unknown, Contains("c.toml:4:18") && Contains("pica"));
}

}  // namespace expand_test
