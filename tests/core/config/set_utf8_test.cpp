// A --set value that is not valid UTF-8 (a bare word taken as a string, e.g. a Latin-1 path): an
// InputError naming the --set, not an nlohmann::json error when the run id is computed. Found by
// the run_config fuzz target (tests/fuzz/run_config_fuzz.cpp), whose corpus keeps the input.
#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "core/config/run_config.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace set_utf8_test {

using namespace attnbench;
using Catch::Matchers::Contains;

CATCH_TEST_CASE("config: a --set value that is not valid UTF-8 is an input error") {
  for (const char* set : {"data.train=caf\xe9/shards", "data.train=\"caf\xe9\"", "eval.bos=\xf0 x"}) {
    CATCH_CAPTURE(set);
    CATCH_CHECK_THROWS_MATCHES(config::parse_run_config("", "cfg.toml", {set}), InputError,
                               Catch::Matchers::Predicate<InputError>([](const InputError& e) {
                                 return std::string(e.what()).find("not valid UTF-8") !=
                                            std::string::npos &&
                                        e.where().file.rfind("--set ", 0) == 0;
                               }));
  }
  // Valid UTF-8 is kept as it is and gets a run id.
  const config::RunConfig cfg =
      config::parse_run_config("", "cfg.toml", {"data.train=caf\xc3\xa9/shards"});
  CATCH_CHECK(cfg.data.train == "caf\xc3\xa9/shards");
  CATCH_CHECK_THAT(config::canonical_json(cfg), Contains("caf\xc3\xa9/shards"));
}

}  // namespace set_utf8_test
