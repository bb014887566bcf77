#pragma once
/// \file
/// The CUDA-event Timer: real kernels on the first visible GPU. Declared in every build; in a
/// build without CUDA (BUDGET_PROFILER_HAS_CUDA = 0) make_cuda_timer() throws NoGpuError.

#include <memory>
#include <stdexcept>

#include "budget/profiler/sweep.hpp"
#include "budget/profiler/timer.hpp"

namespace budget::profiler {

/// No usable GPU (none visible, no driver, or a build without CUDA). what() is one sentence for
/// the user; budget-profile prints it and exits with code 3.
class NoGpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// True when this build contains the CUDA timer.
bool cuda_timer_built();

/// A Timer on CUDA device 0: CUDA events around each launch, `plan.warmup` launches first, then
/// the median of `plan.repeats` timed launches; inputs are uniform random (never zeros), fresh per
/// case. Throws NoGpuError when no GPU can be used.
std::unique_ptr<Timer> make_cuda_timer(const LaunchPlan& plan = {});

}  // namespace budget::profiler
