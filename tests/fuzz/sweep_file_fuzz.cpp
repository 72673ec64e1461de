// Fuzzes the sweep file reader (harness/sweep/sweep_file.h): parse_sweep_text on the input. The
// reader is torch-free and compiled into this target directly; its library, ab_harness_sweep, is
// not (it links LibTorch). The expansion into cells needs the run config and the variants, and is
// covered by the run config target for the config part.
#include <cstddef>
#include <cstdint>
#include <string>

#include "harness/sweep/sweep_file.h"
#include "tests/fuzz/fuzz_support.h"

using namespace attnbench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_clean_errors([&] { sweep::parse_sweep_text(text, "sweeps/fuzz.toml"); });
  return 0;
}
