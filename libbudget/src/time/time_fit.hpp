#pragma once
// Private: the numerical pieces of the time model (docs/calibration.md, "The time model"):
// non-negative weighted least squares and nearest-neighbour residual correction in log space.

#include <cstddef>
#include <utility>
#include <vector>

namespace budget::detail {

/// One measured point: features x (the fit's regressors), log-shape coordinates, time.
struct TimeSample {
  std::vector<double> features;
  std::vector<double> coords;
  double ms = 0;
  /// The time the relative error is taken against (0: `ms` itself). The layer correction fits
  /// `ms` = measured − its fixed part against the measured time (layer_fit.cpp).
  double relative_to_ms = 0;
  double log_residual = 0;  ///< ln(ms / fit(x)), set by fit_time_class()
  bool carried = false;     ///< the row was carried from another GPU (CalibrationRow::carried_from)
};

/// argmin_{β ≥ 0} Σᵢ wᵢ (xᵢ·β − yᵢ)² with wᵢ = 1/rᵢ², rᵢ = `relative_to_ms` or else yᵢ (relative
/// error), by enumerating the
/// active sets (the models have ≤ 4 regressors: 15 subsets), solving each subset's normal
/// equations and keeping the feasible solution of least objective. Returns β (zeros where a
/// regressor is inactive); empty when no subset is solvable (no samples).
std::vector<double> fit_nonnegative_relative(const std::vector<TimeSample>& samples);

/// x·β.
double evaluate_fit(const std::vector<double>& beta, const std::vector<double>& features);

/// Inverse-distance-weighted mean of the log residuals of the `k` samples nearest to `coords`
/// (Euclidean distance d in log-shape space, weight 1/(d + 10⁻⁶)): ρ = Σ wᵢ ρᵢ / Σ wᵢ. A measured
/// shape (d = 0) dominates with weight 10⁶: it is reproduced. Returns 0 for k = 0 or no samples.
double neighbour_log_residual(const std::vector<TimeSample>& samples, const std::vector<double>& coords, int k);

/// The neighbours' mean of the first `count` (distance, log residual) pairs, weighted by inverse
/// distance: Σ wᵢ·rᵢ / Σ wᵢ with wᵢ = 1/(dᵢ + 1e-6) (the 1e-6 keeps an exact match finite).
/// Shared by neighbour_log_residual() and the model's indexed search, so both sum alike, bit for bit.
inline double inverse_distance_mean(const std::pair<double, double>* nearest, std::size_t count) {
  double weighted = 0, total = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const double w = 1.0 / (nearest[i].first + 1e-6);
    weighted += w * nearest[i].second;
    total += w;
  }
  return weighted / total;
}

}  // namespace budget::detail
