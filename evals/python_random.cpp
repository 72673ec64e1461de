// MT19937 as published by Matsumoto and Nishimura (1998), with the init_by_array seeding and the
// random() construction that CPython's _randommodule.c uses.
#include "evals/python_random.h"

#include <cmath>

namespace attnbench::evals {

namespace {
constexpr uint32_t kMatrixA = 0x9908b0dfU;
constexpr uint32_t kUpperMask = 0x80000000U;
constexpr uint32_t kLowerMask = 0x7fffffffU;
constexpr int kM = 397;
}  // namespace

PythonRandom::PythonRandom(uint64_t seed) {
  // CPython splits abs(seed) into 32-bit words, least significant first; 0 becomes the key [0].
  std::vector<uint32_t> key;
  do {
    key.push_back(static_cast<uint32_t>(seed & 0xffffffffU));
    seed >>= 32;
  } while (seed != 0);
  init_by_array(key);
}

void PythonRandom::init_genrand(uint32_t s) {
  mt_[0] = s;
  for (int i = 1; i < kN; ++i) {
    mt_[i] = 1812433253U * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + static_cast<uint32_t>(i);
  }
  index_ = kN;
}

void PythonRandom::init_by_array(const std::vector<uint32_t>& key) {
  init_genrand(19650218U);
  int i = 1;
  size_t j = 0;
  const int key_len = static_cast<int>(key.size());
  for (int k = kN > key_len ? kN : key_len; k > 0; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1664525U)) + key[j] +
             static_cast<uint32_t>(j);
    ++i;
    ++j;
    if (i >= kN) {
      mt_[0] = mt_[kN - 1];
      i = 1;
    }
    if (j >= key.size()) j = 0;
  }
  for (int k = kN - 1; k > 0; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1566083941U)) - static_cast<uint32_t>(i);
    ++i;
    if (i >= kN) {
      mt_[0] = mt_[kN - 1];
      i = 1;
    }
  }
  mt_[0] = 0x80000000U;  // MSB is 1, assuring a non-zero initial array
  index_ = kN;
}

void PythonRandom::twist() {
  for (int kk = 0; kk < kN; ++kk) {
    uint32_t y = (mt_[kk] & kUpperMask) | (mt_[(kk + 1) % kN] & kLowerMask);
    mt_[kk] = mt_[(kk + kM) % kN] ^ (y >> 1) ^ ((y & 1U) ? kMatrixA : 0U);
  }
  index_ = 0;
}

uint32_t PythonRandom::next_uint32() {
  if (index_ >= kN) twist();
  uint32_t y = mt_[index_++];
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680U;
  y ^= (y << 15) & 0xefc60000U;
  y ^= (y >> 18);
  return y;
}

double PythonRandom::random() {
  const uint32_t a = next_uint32() >> 5;
  const uint32_t b = next_uint32() >> 6;
  return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

std::vector<size_t> PythonRandom::choices(size_t n, size_t k) {
  std::vector<size_t> out(k);
  const double dn = static_cast<double>(n);
  for (auto& x : out) x = static_cast<size_t>(std::floor(random() * dn));
  return out;
}

}  // namespace attnbench::evals
