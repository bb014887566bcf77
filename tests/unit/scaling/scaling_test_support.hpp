#pragma once
// What the scaling-fit tests share: how far two sets of coefficients are apart, and the points
// where the fit objective's derivatives are checked against central differences.

#include <algorithm>
#include <cmath>
#include <utility>

#include "budget/scaling_law.hpp"
#include "scaling/scaling_objective.hpp"

namespace budget::test {

/// The largest |k/r − 1| over E, A, K, a, b and c (|k| where r is 0).
inline double max_relative_difference(const ScalingCoefficients& k, const ScalingCoefficients& r) {
  double out = 0.0;
  for (const auto& [x, y] : {std::pair{k.E, r.E}, {k.A, r.A}, {k.K, r.K}, {k.a, r.a}, {k.b, r.b}, {k.c, r.c}}) {
    out = std::max(out, y == 0.0 ? std::fabs(x) : std::fabs(x / y - 1.0));
  }
  return out;
}

/// Calls check(objective, θ, δ) for the Huber objective over `data` at δ = 1e-3 (mostly the linear
/// regime for 0.5% noise) and δ = 1 (quadratic everywhere), each at the θ of two coefficient sets.
template <class Check>
void at_derivative_check_points(const detail::CentredData& data, Check&& check) {
  for (const double delta : {1e-3, 1.0}) {
    const detail::HuberObjective objective(data, delta);
    for (const ScalingCoefficients& at :
         {ScalingCoefficients{1.3, 2500.0, 4e6, 0.35, 0.2, 0.65}, ScalingCoefficients{0.9, 800.0, 9e6, 0.5, 0.05, 0.8}}) {
      check(objective, detail::to_theta(at, data), delta);
    }
  }
}

}  // namespace budget::test
