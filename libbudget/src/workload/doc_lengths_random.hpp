#pragma once
// Private: the portable pseudo-random generator behind LengthSampler and shuffle_lengths.
// xoshiro256** (Blackman & Vigna, 2018) seeded through splitmix64, with our own transforms to
// uniform doubles and bounded integers, so a seed means the same stream on every platform
// (std::*_distribution outputs are implementation-defined).

#include <cstdint>

namespace budget::detail {

class Xoshiro256 {
 public:
  explicit Xoshiro256(std::uint64_t seed) {
    std::uint64_t x = seed;
    for (auto& word : state_) word = splitmix64(x);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  /// Uniform in (0, 1]: never 0, for logarithms.
  double uniform_positive() { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }

  /// Uniform integer in [0, bound) for bound ≥ 1, without modulo bias (rejection on the top
  /// bits: draws that fall in the last incomplete multiple of `bound` are redrawn).
  std::uint64_t below(std::uint64_t bound) {
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    std::uint64_t x = next();
    while (x >= limit) x = next();
    return x % bound;
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static std::uint64_t splitmix64(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  std::uint64_t state_[4];
};

}  // namespace budget::detail
