#include "time/time_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace budget::detail {

namespace {

/// Solves A·x = b (n×n, Gaussian elimination with partial pivoting); false if singular.
bool solve_linear(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>& x) {
  const std::size_t n = b.size();
  double scale = 0;
  for (const auto& row : a) {
    for (double v : row) scale = std::max(scale, std::abs(v));
  }
  if (scale == 0) return false;
  for (std::size_t col = 0; col < n; ++col) {
    std::size_t pivot = col;
    for (std::size_t r = col + 1; r < n; ++r) {
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    }
    if (std::abs(a[pivot][col]) <= 1e-12 * scale) return false;
    std::swap(a[pivot], a[col]);
    std::swap(b[pivot], b[col]);
    for (std::size_t r = 0; r < n; ++r) {
      if (r == col) continue;
      const double f = a[r][col] / a[col][col];
      if (f == 0) continue;
      for (std::size_t c = col; c < n; ++c) a[r][c] -= f * a[col][c];
      b[r] -= f * b[col];
    }
  }
  x.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) x[i] = b[i] / a[i][i];
  return true;
}

}  // namespace

double evaluate_fit(const std::vector<double>& beta, const std::vector<double>& features) {
  double sum = 0;
  for (std::size_t i = 0; i < beta.size() && i < features.size(); ++i) sum += beta[i] * features[i];
  return sum;
}

std::vector<double> fit_nonnegative_relative(const std::vector<TimeSample>& samples) {
  if (samples.empty()) return {};
  const std::size_t p = samples.front().features.size();
  std::vector<double> best;
  double best_objective = std::numeric_limits<double>::infinity();
  for (unsigned mask = 1; mask < (1u << p); ++mask) {
    std::vector<std::size_t> active;
    for (std::size_t j = 0; j < p; ++j) {
      if (mask & (1u << j)) active.push_back(j);
    }
    const std::size_t n = active.size();
    if (n > samples.size()) continue;
    // Normal equations of the weighted problem: (Xᵀ W X) β = Xᵀ W y, W = diag(1/r²).
    std::vector<std::vector<double>> a(n, std::vector<double>(n, 0));
    std::vector<double> b(n, 0);
    for (const auto& s : samples) {
      const double r = s.relative_to_ms > 0 ? s.relative_to_ms : s.ms;
      const double w = 1.0 / (r * r);
      for (std::size_t i = 0; i < n; ++i) {
        const double xi = s.features[active[i]];
        b[i] += w * xi * s.ms;
        for (std::size_t j = 0; j < n; ++j) a[i][j] += w * xi * s.features[active[j]];
      }
    }
    std::vector<double> x;
    if (!solve_linear(a, b, x)) continue;
    if (std::any_of(x.begin(), x.end(), [](double v) { return !(v >= 0); })) continue;
    std::vector<double> beta(p, 0);
    for (std::size_t i = 0; i < n; ++i) beta[active[i]] = x[i];
    double objective = 0;
    for (const auto& s : samples) {
      const double r = (evaluate_fit(beta, s.features) - s.ms) / (s.relative_to_ms > 0 ? s.relative_to_ms : s.ms);
      objective += r * r;
    }
    if (objective < best_objective) {
      best_objective = objective;
      best = beta;
    }
  }
  return best;
}

double neighbour_log_residual(const std::vector<TimeSample>& samples, const std::vector<double>& coords, int k) {
  if (k <= 0 || samples.empty()) return 0;
  std::vector<std::pair<double, double>> by_distance;  // (distance, residual)
  by_distance.reserve(samples.size());
  for (const auto& s : samples) {
    double d2 = 0;
    for (std::size_t i = 0; i < coords.size() && i < s.coords.size(); ++i) {
      const double d = s.coords[i] - coords[i];
      d2 += d * d;
    }
    by_distance.emplace_back(std::sqrt(d2), s.log_residual);
  }
  const auto count = std::min<std::size_t>(static_cast<std::size_t>(k), by_distance.size());
  std::partial_sort(by_distance.begin(), by_distance.begin() + static_cast<std::ptrdiff_t>(count), by_distance.end());
  return inverse_distance_mean(by_distance.data(), count);
}

}  // namespace budget::detail
