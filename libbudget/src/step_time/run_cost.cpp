// A run's cost from a step time (docs/cluster.md, "Step time"). The step time's JSON is render/'s
// (budget_render/cluster_time.hpp).
#include "budget/cluster_time.hpp"

#include <fmt/format.h>

#include "budget/error.hpp"

namespace budget {

RunCost run_cost(const ClusterStepTime& time, std::int64_t gpus, double tokens) {
  if (!(tokens > 0.0)) throw Error(fmt::format("run tokens = {} must be positive", tokens), "tokens");
  RunCost c;
  c.steps = tokens / static_cast<double>(time.tokens_per_step);
  c.wall_clock_seconds = c.steps * time.seconds_per_step;
  c.gpu_hours = c.wall_clock_seconds * static_cast<double>(gpus) / 3600.0;
  return c;
}

}  // namespace budget
