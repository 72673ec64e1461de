// ALiBi slopes equal the published schedule (Press et al. 2022, "Train Short, Test Long": for n a
// power of two, 2^(-8k/n), k = 1..n; otherwise the closest power of two's slopes followed by every
// other slope of the schedule for twice that). The values are written out here, not computed.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <cmath>

#include "variants/position.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace alibi_test {

using attnbench::variants::alibi_slopes;

namespace {
void check_slopes(int64_t n, const std::vector<double>& published) {
  CATCH_CAPTURE(n);
  auto got = alibi_slopes(n);
  CATCH_REQUIRE(got.size() == published.size());
  for (size_t h = 0; h < got.size(); ++h) {
    CATCH_CAPTURE(h);
    CATCH_CHECK(std::abs(got[h] - published[h]) <= 1e-15 * published[h]);
  }
}
}  // namespace

CATCH_TEST_CASE("ALiBi slopes for 8, 12 and 16 heads equal the published schedule") {
  // 8 heads: 1/2, 1/4, ..., 1/256.
  check_slopes(8, {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625});
  // 16 heads: 2^-0.5, 2^-1, ..., 2^-8.
  check_slopes(16, {0.7071067811865476, 0.5, 0.35355339059327373, 0.25, 0.17677669529663687,
                    0.125, 0.08838834764831843, 0.0625, 0.04419417382415922, 0.03125,
                    0.02209708691207961, 0.015625, 0.011048543456039806, 0.0078125,
                    0.005524271728019903, 0.00390625});
  // 12 heads: the 8-head slopes, then the 1st, 3rd, 5th and 7th of the 16-head schedule
  // (2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5).
  check_slopes(12, {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625,
                    0.7071067811865476, 0.35355339059327373, 0.17677669529663687,
                    0.08838834764831843});
}

}  // namespace alibi_test
