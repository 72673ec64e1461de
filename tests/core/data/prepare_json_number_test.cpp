// `data prepare` on a JSONL line holding a number too large for a double ("1e999"): nlohmann
// reports it as out_of_range, not as a parse error, and the line must still be a malformed line
// like any other: file:line without --skip-bad, skipped and counted with it (it used to escape as a
// raw nlohmann error and stop the run either way).
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "core/data/prepare.h"
#include "tests/core/data/test_support.h"

namespace fs = std::filesystem;

CATCH_TEST_CASE("data prepare: a number too large for a double is a malformed line", "[prepare]") {
  auto root = attnbench::data::testing::data_root_or_skip("data prepare number overflow");
  if (!root) return;
  const fs::path dir = fs::temp_directory_path() / ("ab-prepare-number-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "in.jsonl") << "{\"text\": \"one\"}\n{\"text\": \"two\", \"score\": 1e999}\n"
                                     "{\"text\": \"three\"}\n";
  attnbench::data::PrepareOptions o;
  o.inputs = {dir / "in.jsonl"};
  o.out = dir / "out";
  o.tokenizer_dir = *root / "gpt2_tokenizer";
  o.val_tokens = 0;
  o.jobs = 1;
  CATCH_REQUIRE_THROWS_WITH(attnbench::data::prepare_shards(o),
                            Catch::Matchers::Contains("in.jsonl:2") &&
                                Catch::Matchers::Contains("invalid JSON"));
  o.skip_bad = true;
  const auto summary = attnbench::data::prepare_shards(o);
  CATCH_CHECK(summary.skipped == 1);
  CATCH_CHECK(summary.documents == 2);
  fs::remove_all(dir);
}
