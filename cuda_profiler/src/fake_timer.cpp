#include <algorithm>

#include <fmt/format.h>

#include "budget/profiler/timer.hpp"

namespace budget::profiler {

double RooflineRates::ms(const OpCase& c) const {
  const double compute_s = c.flops / (tflops * 1e12);
  const double memory_s = c.bytes / (gbytes_per_s * 1e9);
  return std::max(compute_s, memory_s) * 1e3 + launch_us * 1e-3;
}

DeviceInfo FakeTimer::device() const {
  DeviceInfo d;
  d.name = "simulated (roofline, no GPU)";
  d.compute_capability = "0.0";
  d.driver = d.cuda_runtime = d.cublas = d.cudnn = "none";
  return d;
}

std::string FakeTimer::method() const {
  return fmt::format("simulated: roofline max(flops/{} TFLOP/s, bytes/{} GB/s) + {} us launch; not a measurement",
                     rates_.tflops, rates_.gbytes_per_s, rates_.launch_us);
}

Peaks FakeTimer::measure_peaks() { return Peaks{rates_.tflops, rates_.gbytes_per_s}; }

std::vector<CheckResult> FakeTimer::check_correctness() {
  return {CheckResult{"", "simulated timer (no kernels run)", 0.0, 0.0, true, "nothing to check"}};
}

Timing FakeTimer::time(const OpCase& c) {
  ++timed_;
  if (c.op == ProfileOp::attention && c.at("head_dim") % 8 != 0) {
    return Timing{true, 0.0, "cudnn", fmt::format("cuDNN fused attention needs head_dim % 8 == 0 (got {})", c.at("head_dim"))};
  }
  return Timing{false, rates_.ms(c), c.op == ProfileOp::attention ? "cudnn" : "simulated", {}};
}

}  // namespace budget::profiler
