// Fuzzes the TOML run config reader (core/config): parse_run_config on the input's text, then every
// `--set` after it. An input is "TOML\0SET\0SET...": the text up to the first NUL byte is the file,
// each further NUL-separated piece one KEY=VALUE override.
//
// A config that loads must also survive what the rest of attnbench does with it: canonical JSON,
// the run id, the flat parameter list, and the JSON round trip (a run folder's config.json is read
// back by parse_json_run_config): it must load again to the same canonical JSON.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/config/run_config.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/stand_in_variants.h"

namespace {

using namespace attnbench;

const bool registered = fuzz::register_stand_in_variants();

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> pieces;
  for (size_t begin = 0;;) {
    size_t end = input.find('\0', begin);
    pieces.push_back(input.substr(begin, end - begin));
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  const std::vector<std::string> sets(pieces.begin() + 1, pieces.end());
  fuzz::expect_clean_errors([&] {
    const config::RunConfig cfg = config::parse_run_config(pieces[0], "fuzz.toml", sets);
    const std::string canonical = config::canonical_json(cfg);
    config::config_hash(cfg);
    config::flatten(cfg);
    config::RunConfig back;
    try {
      back = config::parse_json_run_config(canonical, "config.json");
    } catch (const UsageError& e) {
      fuzz::bug("a loaded config does not load back from its canonical JSON", &e);
    }
    if (config::canonical_json(back) != canonical) {
      fuzz::bug("the canonical JSON changes over a JSON round trip", nullptr);
    }
  });
  return 0;
}
