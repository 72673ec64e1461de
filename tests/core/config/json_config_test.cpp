// JSON run configs (`attnbench train --config RUN/config.json`): a run folder's resolved config
// read back as the same run, validated like TOML, with errors naming the file and the key.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/config/run_config.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace json_config_test {

namespace fs = std::filesystem;
using namespace attnbench;
using namespace attnbench::config;
using Catch::Matchers::Contains;

namespace {

// A file in a fresh folder, removed with it.
struct TempFile {
  fs::path dir, path;
  explicit TempFile(const std::string& name, const std::string& text) {
    static int counter = 0;
    dir = fs::temp_directory_path() /
          ("attnbench-test-json-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(dir);
    path = dir / name;
    std::ofstream(path) << text;
  }
  ~TempFile() { fs::remove_all(dir); }
};

// What a run folder's config.json holds (train/trainer.cpp writes exactly this).
std::string run_folder_json(const RunConfig& cfg) { return to_json(cfg).dump(2) + "\n"; }

std::string json_error(const std::string& text, const std::vector<std::string>& sets = {}) {
  TempFile f("config.json", text);
  try {
    load_run_config(f.path, sets);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

CATCH_TEST_CASE("a run folder's config.json loads as the same run") {
  const RunConfig cfg = parse_run_config(
      "[model]\ncontext_length = 64\n[attention]\nvariant = \"lazy\"\ntau_form = \"per_token\"\n"
      "[train]\nsteps = 7\nlr = 1\nthreads = 2\n[eval]\ntasks = [\"piqa\", \"copa\"]\nlimit = 5\n"
      "task_limits = { wikitext = 2 }\n",
      "cfg.toml");
  TempFile f("config.json", run_folder_json(cfg));
  const RunConfig back = load_run_config(f.path);
  CATCH_CHECK(config_hash(back) == config_hash(cfg));
  CATCH_CHECK(canonical_json(back) == canonical_json(cfg));  // eval and execution keys too
  CATCH_CHECK(back.source == f.path.string());
  CATCH_CHECK(back.train.lr == 1.0);  // written as 1.0: still a float
  CATCH_CHECK(back.eval.limit_for("wikitext") == 2);
  // Written again, it is the same text: a config.json round-trips byte for byte.
  CATCH_CHECK(run_folder_json(back) == run_folder_json(cfg));
}

CATCH_TEST_CASE("JSON configs may leave keys out and are validated like TOML") {
  TempFile f("c.json", R"({"train": {"steps": 3}, "attention": {"variant": "alibi"}})");
  const RunConfig c = load_run_config(f.path);
  CATCH_CHECK(c.train.steps == 3);
  CATCH_CHECK(c.model.n_layer == 2);  // the tiny preset's default
  CATCH_CHECK(config_hash(c) ==
              config_hash(parse_run_config("[train]\nsteps = 3\n[attention]\nvariant = \"alibi\"\n",
                                           "cfg.toml")));
}

CATCH_TEST_CASE("bad JSON configs name the file and the key") {
  CATCH_CHECK_THAT(json_error(R"({"train": {"stesp": 3}})"),
                   Contains("config.json, key train.stesp") && Contains("unknown key train.stesp") &&
                       Contains("did you mean 'steps'"));
  CATCH_CHECK_THAT(json_error(R"({"train": {"steps": "ten"}})"),
                   Contains("config.json, key train.steps") &&
                       Contains("train.steps must be of type int (got string"));
  CATCH_CHECK_THAT(json_error(R"({"train": {"lr": null}})"),
                   Contains("config.json, key train.lr") && Contains("train.lr is null"));
  CATCH_CHECK_THAT(json_error(R"({"attention": {"variant": "lazy", "tau_innit": 0}})"),
                   Contains("key attention.tau_innit") && Contains("did you mean 'tau_init'"));
  CATCH_CHECK_THAT(json_error(R"({"trian": {}})"),
                   Contains("config.json, key trian") && Contains("did you mean 'train'"));
  CATCH_CHECK_THAT(json_error(R"({"train": 3})"), Contains("[train] must be a table"));
  CATCH_CHECK_THAT(json_error(R"({"eval": {"tasks": [1]}})"),
                   Contains("key eval.tasks") && Contains("array of strings"));
  CATCH_CHECK_THAT(json_error(R"({"model": {"d_model": 130, "n_head": 4}})"),
                   Contains("config.json") && Contains("does not divide model.d_model = 130"));
  CATCH_CHECK_THAT(json_error("[1, 2]"), Contains("config.json: a JSON run config must be an object"));
  // Syntax errors point at the line and column.
  CATCH_CHECK_THAT(json_error("{\n  \"train\": {\"steps\": 3,}\n}\n"),
                   Contains("config.json:2:") && Contains("invalid JSON"));
}

CATCH_TEST_CASE("a JSON config refuses command-line overrides, saying why") {
  const std::string text = run_folder_json(parse_run_config("", "cfg.toml"));
  CATCH_CHECK_THAT(json_error(text, {"train.steps=5"}),
                   Contains("--set train.steps=5") && Contains("TOML configs only") &&
                       Contains("config.json is a resolved JSON config"));
  CATCH_CHECK(json_error(text) == "(no error)");
}

CATCH_TEST_CASE("stored configs name their source in errors, not a --set") {
  nlohmann::json j = to_json(parse_run_config("", "cfg.toml"));
  j["train"]["steps"] = "x";
  try {
    from_json(j);
    CATCH_FAIL("expected an error");
  } catch (const UsageError& e) {
    CATCH_CHECK_THAT(std::string(e.what()), Contains("stored config, key train.steps"));
  }
}

}  // namespace json_config_test
