// GPU-hours at equal loss (budget/scaling_gpu_hours.hpp) against hand computations.

#include <cmath>

#include <catch2/catch.hpp>

#include "budget/error.hpp"
#include "budget/scaling_gpu_hours.hpp"

using namespace budget;

namespace {

GainReport::Entry entry(double gain, double lower, double upper) {
  GainReport::Entry e;
  e.C = 3.6e21;
  e.S = 0.95;
  e.gain = {gain, lower, upper};
  // C_ref = C / (1 − G), its interval from G's.
  e.C_reference = {e.C / (1.0 - gain), e.C / (1.0 - lower), e.C / (1.0 - upper)};
  return e;
}

}  // namespace

TEST_CASE("GPU-hours at equal loss: a FLOPs saving eaten by the time per FLOP", "[scaling][gpu_hours]") {
  // G = 10% [5%, 15%]; the target's time per FLOP 1.2 × the reference's:
  // G_h = 1 − 0.9·1.2 = −0.08, interval [1 − 0.95·1.2, 1 − 0.85·1.2] = [−0.14, −0.02].
  const GpuHoursAtEqualLoss g = gpu_hours_at_equal_loss(entry(0.10, 0.05, 0.15), 1.2e-15, 1.0e-15);
  CHECK(g.time_per_flop_ratio == Approx(1.2));
  CHECK(g.gpu_hours_gain.value == Approx(-0.08));
  CHECK(g.gpu_hours_gain.lower == Approx(-0.14));
  CHECK(g.gpu_hours_gain.upper == Approx(-0.02));
  CHECK(g.break_even_ratio == Approx(1.0 / 0.9));
  CHECK(g.saving_eaten);
  // GPU-hours = C · τ / 3600: 3.6e21 · 1.2e-15 / 3600 = 1200 h; the reference 4e21 · 1e-15 / 3600 = 1111.1 h.
  CHECK(g.target_gpu_hours == Approx(1200.0));
  CHECK(g.reference_gpu_hours.value == Approx(4e21 * 1e-15 / 3600.0));
  CHECK(1.0 - g.target_gpu_hours / g.reference_gpu_hours.value == Approx(g.gpu_hours_gain.value));
}

TEST_CASE("GPU-hours at equal loss: a saving that survives, equal times and no interval", "[scaling][gpu_hours]") {
  // ρ = 1.05 < 1/(1 − 0.1): G_h = 1 − 0.9·1.05 = 0.055.
  const GpuHoursAtEqualLoss g = gpu_hours_at_equal_loss(entry(0.10, 0.05, 0.15), 1.05e-15, 1.0e-15);
  CHECK(g.gpu_hours_gain.value == Approx(0.055));
  CHECK_FALSE(g.saving_eaten);
  // ρ = 1: the GPU-hour gain is the FLOPs gain.
  CHECK(gpu_hours_at_equal_loss(entry(0.10, 0.05, 0.15), 2e-15, 2e-15).gpu_hours_gain.value == Approx(0.10));
  GainReport::Entry point = entry(0.2, 0.2, 0.2);
  point.gain.lower = point.gain.upper = std::nan("");
  const GpuHoursAtEqualLoss p = gpu_hours_at_equal_loss(point, 1e-15, 1e-15);
  CHECK_FALSE(p.gpu_hours_gain.has_interval());
  CHECK(p.gpu_hours_gain.value == Approx(0.2));
}

TEST_CASE("GPU-hours at equal loss: refusals", "[scaling][gpu_hours]") {
  CHECK_THROWS_AS(gpu_hours_at_equal_loss(entry(0.1, 0.05, 0.15), 0.0, 1e-15), Error);
  CHECK_THROWS_AS(gpu_hours_at_equal_loss(entry(0.1, 0.05, 0.15), 1e-15, std::nan("")), Error);
  CHECK_THROWS_AS(gpu_hours_at_equal_loss(entry(0.1, 0.05, 0.15), -1e-15, 1e-15), Error);
}
