// Seeds for the tests that draw random inputs. By default they are fixed: a test's n-th seed is a
// function of a base seed, the test's label and n, so CI draws the same inputs on every run and
// `ctest --repeat until-fail:N` repeats them. Two environment variables change that:
//   ATTNBENCH_TEST_SOAK=1     a fresh base seed per process: an opt-in soak that looks for rare
//                             failures (docs/toolchain.md, "Tests: seeds and skips");
//   ATTNBENCH_TEST_SEED=<n>   the base seed to use: replays a soak's failure.
// Tests report each draw's seed with describe(), which names the base to replay it with.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>

namespace attnbench::testing {

// The base seed (read once per process).
inline uint64_t base_seed() {
  static const uint64_t base = [] {
    if (const char* s = std::getenv("ATTNBENCH_TEST_SEED"); s && *s) {
      return static_cast<uint64_t>(std::stoull(s, nullptr, 0));
    }
    if (const char* s = std::getenv("ATTNBENCH_TEST_SOAK"); s && *s && std::string_view(s) != "0") {
      std::random_device rd;
      return (static_cast<uint64_t>(rd()) << 32) | rd();
    }
    return uint64_t{0x5eed};
  }();
  return base;
}

// A stream of seeds named by a label: SplitMix64 (Steele, Lea and Flood 2014) started from the
// base seed mixed with the label's FNV-1a hash, so that streams of different labels differ and a
// stream does not depend on the draws other tests made before it.
class Seeds {
 public:
  explicit Seeds(std::string_view label) : state_(base_seed()) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : label) h = (h ^ c) * 0x100000001b3ull;
    state_ ^= h;
  }
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

// "seed=<seed> (ATTNBENCH_TEST_SEED=<base> replays it)", for a failure's message.
inline std::string describe(uint64_t seed) {
  return "seed=" + std::to_string(seed) + " (ATTNBENCH_TEST_SEED=" + std::to_string(base_seed()) +
         " replays it)";
}

}  // namespace attnbench::testing
