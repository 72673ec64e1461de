// Fuzzes the JSON run config reader (core/config): parse_json_run_config, which reads a run
// folder's or a checkpoint's config.json, then what is done with a loaded config (canonical JSON,
// run id, flat parameter list).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/config/run_config.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/stand_in_variants.h"

namespace {

using namespace attnbench;

const bool registered = fuzz::register_stand_in_variants();

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_clean_errors([&] {
    const config::RunConfig cfg = config::parse_json_run_config(text, "config.json");
    config::canonical_json(cfg);
    config::config_hash(cfg);
    config::flatten(cfg);
  });
  return 0;
}
