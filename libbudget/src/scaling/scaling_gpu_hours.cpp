// GPU-hours at equal loss from a compute-efficiency gain (the formula is in
// budget/scaling_gpu_hours.hpp).
#include "budget/scaling_gpu_hours.hpp"

#include <cmath>

#include <fmt/format.h>

#include "budget/error.hpp"

namespace budget {

namespace {

double gpu_hours_gain(double flops_gain, double rho) { return 1.0 - (1.0 - flops_gain) * rho; }

}  // namespace

GpuHoursAtEqualLoss gpu_hours_at_equal_loss(const GainReport::Entry& e, double tau_target, double tau_reference) {
  for (const auto& [value, what] : {std::pair<double, const char*>{tau_target, "target"}, {tau_reference, "reference"}}) {
    if (!(std::isfinite(value) && value > 0.0)) {
      throw Error(fmt::format("GPU-seconds per FLOP of the {} is {}; allowed: a positive finite number", what, value),
                  "gpu_seconds_per_flop");
    }
  }
  GpuHoursAtEqualLoss out;
  out.C = e.C;
  out.S = e.S;
  out.flops_gain = e.gain;
  out.time_per_flop_ratio = tau_target / tau_reference;
  out.break_even_ratio = 1.0 / (1.0 - e.gain.value);
  out.gpu_hours_gain.value = gpu_hours_gain(e.gain.value, out.time_per_flop_ratio);
  if (e.gain.has_interval()) {
    out.gpu_hours_gain.lower = gpu_hours_gain(e.gain.lower, out.time_per_flop_ratio);
    out.gpu_hours_gain.upper = gpu_hours_gain(e.gain.upper, out.time_per_flop_ratio);
  }
  out.target_gpu_hours = e.C * tau_target / 3600.0;
  out.reference_gpu_hours.value = e.C_reference.value * tau_reference / 3600.0;
  if (e.C_reference.has_interval()) {
    out.reference_gpu_hours.lower = e.C_reference.lower * tau_reference / 3600.0;
    out.reference_gpu_hours.upper = e.C_reference.upper * tau_reference / 3600.0;
  }
  out.saving_eaten = e.gain.value > 0.0 && out.gpu_hours_gain.value <= 0.0;
  return out;
}

}  // namespace budget
