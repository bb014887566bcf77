// The indexed k-nearest-neighbour search (neighbour_index.hpp).

#include "time/neighbour_index.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace budget::detail {

void NeighbourIndex::build(const std::vector<TimeSample>& samples) {
  if (samples.empty()) return;
  dims = samples.front().coords.size();
  double widest = -1;
  for (std::size_t a = 0; a < dims; ++a) {
    double lo = samples.front().coords[a], hi = lo;
    for (const auto& s : samples) {
      lo = std::min(lo, s.coords[a]);
      hi = std::max(hi, s.coords[a]);
    }
    if (hi - lo > widest) {
      widest = hi - lo;
      axis = a;
    }
  }
  std::vector<std::size_t> order(samples.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return samples[x].coords[axis] < samples[y].coords[axis]; });
  for (const std::size_t i : order) {
    axis_value.push_back(samples[i].coords[axis]);
    coords.insert(coords.end(), samples[i].coords.begin(), samples[i].coords.end());
    residual.push_back(samples[i].log_residual);
  }
}

double NeighbourIndex::log_residual(const double* query, std::size_t query_dims, int k) const {
  if (k <= 0 || axis_value.empty()) return 0;
  const std::size_t n = axis_value.size();
  const std::size_t want = std::min<std::size_t>(static_cast<std::size_t>(k), n);
  constexpr std::size_t stack = 16;
  std::array<std::pair<double, double>, stack> small{};
  std::vector<std::pair<double, double>> large;
  std::pair<double, double>* best = small.data();
  if (want > stack) {
    large.resize(want);
    best = large.data();
  }
  std::size_t found = 0;
  const std::size_t used = std::min(dims, query_dims);
  const auto consider = [&](std::size_t i) {
    double d2 = 0;
    for (std::size_t c = 0; c < used; ++c) {
      const double d = coords[i * dims + c] - query[c];
      d2 += d * d;
    }
    const std::pair<double, double> e{std::sqrt(d2), residual[i]};
    if (found == want && !(e < best[want - 1])) return;
    std::size_t at = found == want ? want - 1 : found++;
    while (at > 0 && e < best[at - 1]) {
      best[at] = best[at - 1];
      --at;
    }
    best[at] = e;
  };
  // Distance ≥ |axis gap| up to rounding: a side stops when its gap exceeds the k-th distance
  // by more than a relative 1e-9 (so no sample that could tie or win is skipped).
  const auto beyond = [&](double gap) { return found == want && gap > best[want - 1].first * (1 + 1e-9) + 1e-300; };
  const double q = query[axis];
  std::size_t right = static_cast<std::size_t>(std::lower_bound(axis_value.begin(), axis_value.end(), q) - axis_value.begin());
  std::size_t left = right;  // samples [0, left) and [right, n) not yet visited
  bool left_open = left > 0, right_open = right < n;
  while (left_open || right_open) {
    if (right_open) {
      if (beyond(axis_value[right] - q)) {
        right_open = false;
      } else {
        consider(right++);
        right_open = right < n;
      }
    }
    if (left_open) {
      if (beyond(q - axis_value[left - 1])) {
        left_open = false;
      } else {
        consider(--left);
        left_open = left > 0;
      }
    }
  }
  return inverse_distance_mean(best, found);
}

}  // namespace budget::detail
