#pragma once
// Private: the indexed k-nearest-neighbour search of the time model's residual correction.

#include <cstddef>
#include <vector>

#include "time/time_fit.hpp"

namespace budget::detail {

/// The samples of a class sorted along one log-shape axis (the one of widest spread), for the
/// k nearest shapes without visiting all of them: from the query's position on the axis outwards,
/// each side stopped once its axis gap alone exceeds the k-th distance found. The same k samples
/// and the same sum as detail::neighbour_log_residual() (ties by (distance, residual), summed in
/// that order), bit for bit.
struct NeighbourIndex {
  std::size_t axis = 0;
  std::size_t dims = 0;
  std::vector<double> axis_value;  ///< sorted
  std::vector<double> coords;      ///< dims per sample, in the sorted order
  std::vector<double> residual;

  void build(const std::vector<TimeSample>& samples);
  /// detail::neighbour_log_residual() of the built samples at `query` (its first `query_dims` coordinates).
  double log_residual(const double* query, std::size_t query_dims, int k) const;
};

}  // namespace budget::detail
