// make_nccl_collective_timer() of a build without NCCL (BUDGET_PROFILER_HAS_NCCL = 0).
#include "budget/profiler/collectives.hpp"
#include "budget/profiler/config.hpp"
#include "budget/profiler/cuda_timer.hpp"

#if !BUDGET_PROFILER_HAS_NCCL
namespace budget::profiler {

bool nccl_collectives_built() { return false; }

std::unique_ptr<CollectiveTimer> make_nccl_collective_timer(const LaunchPlan&, std::int64_t) {
  throw NoGpuError(std::string(collectives_refusal) +
                   "this budget-profile was built without NCCL (" +
#if BUDGET_PROFILER_HAS_CUDA
                   "CMake found no nccl.h and libnccl, or BUDGET_PROFILER_NCCL=OFF" +
#else
                   "it was built without CUDA" +
#endif
                   "), so it cannot time collectives; rebuild with CUDA and NCCL or use --dry-run / --simulate");
}

}  // namespace budget::profiler
#endif
