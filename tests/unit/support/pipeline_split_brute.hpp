// The pipeline splits the layout search tries (docs/cluster.md, "Layout search"), found by brute
// force for the tests that enumerate the search's space independently: no formula of the library's.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

namespace budget::test {

/// (first, last) stage layer counts for `total` layers over `pp` ranks of `v` chunks; (−1, −1) is
/// the even split. The even split alone where PP·V divides the layers; else every pair Megatron's
/// TransformerConfig accepts (first, last ≥ 1 and multiples of V; the middle ranks' layers > 0,
/// divisible over them and by V; none of either with PP = 2), keeping those with the smallest
/// largest rank, then the most layers on each middle rank, then first and last within V of each other.
inline std::vector<std::pair<std::int64_t, std::int64_t>> brute_pipeline_splits(std::int64_t total, std::int64_t pp,
                                                                               std::int64_t v) {
  if (total % (pp * v) == 0) return {{-1, -1}};
  struct Pair {
    std::int64_t first, last, middle, largest;
  };
  std::vector<Pair> accepted;
  for (std::int64_t first = 1; pp > 1 && first <= total; ++first) {
    for (std::int64_t last = 1; first + last <= total; ++last) {
      if (first % v != 0 || last % v != 0) continue;
      const std::int64_t rest = total - first - last;
      std::int64_t middle = 0;
      if (pp == 2) {
        if (rest != 0) continue;
      } else {
        if (rest <= 0 || rest % (pp - 2) != 0 || (rest / (pp - 2)) % v != 0) continue;
        middle = rest / (pp - 2);
      }
      accepted.push_back({first, last, middle, std::max({first, last, middle})});
    }
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> kept;
  if (accepted.empty()) return kept;
  std::int64_t smallest_largest = accepted.front().largest;
  for (const Pair& p : accepted) smallest_largest = std::min(smallest_largest, p.largest);
  std::int64_t most_middle = 0;
  for (const Pair& p : accepted) {
    if (p.largest == smallest_largest) most_middle = std::max(most_middle, p.middle);
  }
  for (const Pair& p : accepted) {
    if (p.largest == smallest_largest && p.middle == most_middle && std::abs(p.first - p.last) <= v) {
      kept.emplace_back(p.first, p.last);
    }
  }
  return kept;
}

/// (PP, V, first, last) for PP 1..max_pp and V 1, 2, 4 (V 1 alone at PP 1): every pipeline of the
/// layout search's space for `total` layers, in its order, the splits by brute_pipeline_splits().
inline std::vector<std::array<std::int64_t, 4>> brute_pipeline_space(std::int64_t total, std::int64_t max_pp) {
  std::vector<std::array<std::int64_t, 4>> space;
  for (std::int64_t pp = 1; pp <= max_pp; ++pp) {
    for (const std::int64_t v : {1, 2, 4}) {
      if (pp == 1 && v > 1) continue;
      for (const auto& [first, last] : brute_pipeline_splits(total, pp, v)) space.push_back({pp, v, first, last});
    }
  }
  return space;
}

}  // namespace budget::test
