// make_cuda_timer() of a build without CUDA (BUDGET_PROFILER_HAS_CUDA = 0).
#include "budget/profiler/config.hpp"
#include "budget/profiler/cuda_timer.hpp"

#if !BUDGET_PROFILER_HAS_CUDA
namespace budget::profiler {

bool cuda_timer_built() { return false; }

std::unique_ptr<Timer> make_cuda_timer(const LaunchPlan&) {
  throw NoGpuError(
      "this budget-profile was built without CUDA (no nvcc at configure time), so it cannot measure a GPU; "
      "rebuild with a CUDA toolkit (BUDGET_CUDA=ON) or use --dry-run / --simulate");
}

}  // namespace budget::profiler
#endif
