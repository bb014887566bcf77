#include "scaling/scaling_synthetic.hpp"

#include <cmath>
#include <numbers>
#include <random>

#include <fmt/format.h>

namespace budget::detail {

ScalingCoefficients paper_baseline_coefficients() { return {1.4439, 1.366e3, 1.975e6, 0.3703, 0.1530, 0.6594}; }
ScalingCoefficients paper_looped_coefficients() { return {1.4493, 1.963e3, 5.264e6, 0.3892, 0.1460, 0.7011}; }

namespace {
/// A standard normal draw by Box–Muller from 53-bit uniforms: the same on every platform
/// (std::normal_distribution's algorithm is left to the implementation).
double standard_normal(std::mt19937_64& rng) {
  const auto uniform = [&] { return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53; };
  const double u1 = uniform();
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}
}  // namespace

std::vector<LossPoint> synthetic_paper_grid(const ScalingCoefficients& law, const std::string& arch,
                                            double noise_sigma, std::uint64_t seed) {
  static constexpr double sizes_F[] = {6e8, 1.5e9, 4e9, 1e10};
  static constexpr const char* size_names[] = {"100M", "200M", "600M", "1.6B"};
  static constexpr double sparsities[] = {0.85, 0.95, 0.97};
  static constexpr double F_factor[] = {1.0, 1.01, 1.02};
  static constexpr double horizons_D[] = {2e10, 3e10, 6e10, 1.1e11, 1.6e11, 2.2e11};
  std::mt19937_64 rng(seed);
  std::vector<LossPoint> points;
  for (std::size_t size = 0; size < 4; ++size) {
    for (std::size_t level = 0; level < 3; ++level) {
      for (double D : horizons_D) {
        LossPoint p;
        p.arch = arch;
        p.cell = fmt::format("{}-S{}", size_names[size], sparsities[level]);
        p.F = sizes_F[size] * F_factor[level];
        p.S = sparsities[level];
        p.D = D;
        p.loss = predict_loss(law, p.F, p.S, p.D);
        if (noise_sigma > 0.0) p.loss *= std::exp(noise_sigma * standard_normal(rng));
        points.push_back(p);
      }
    }
  }
  return points;
}

}  // namespace budget::detail
