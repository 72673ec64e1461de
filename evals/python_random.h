// CPython's `random.Random` (MT19937 seeded by init_by_array, 53-bit random(), choices()), so that
// the bootstrap stderr of lm-eval (metrics.py bootstrap_stderr: chunk i uses random.Random(i))
// draws the very same resamples here.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

namespace attnbench::evals {

class PythonRandom {
 public:
  explicit PythonRandom(uint64_t seed);  // random.Random(seed) for a non-negative int seed
  uint32_t next_uint32();                // genrand_uint32
  double random();                       // random.random(): [0, 1) with 53 random bits
  // random.choices(range(n), k=k): floor(random() * n) k times.
  std::vector<size_t> choices(size_t n, size_t k);

 private:
  static constexpr int kN = 624;
  std::array<uint32_t, kN> mt_{};
  int index_ = kN + 1;
  void init_genrand(uint32_t s);
  void init_by_array(const std::vector<uint32_t>& key);
  void twist();
};

}  // namespace attnbench::evals
