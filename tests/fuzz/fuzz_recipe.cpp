// Training recipes (`plan --recipe`): parse_recipe(), then a plan of one run. An accepted recipe
// must plan to finite, positive tokens and compute.
#include <cmath>

#include "budget/plan.hpp"
#include "fuzz_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace budget;
  fuzz::expect_value_or_error("fuzz_recipe", [&] {
    const Recipe recipe = parse_recipe(fuzz::as_text(data, size), "<fuzz>");
    const Plan plan = plan_runs({PlannedRun{"200M", "baseline", 1.33e9, 0.946}}, recipe);
    for (const PlanEndpoint& e : plan.endpoints) {
      fuzz::require(std::isfinite(e.tokens) && e.tokens > 0 && std::isfinite(e.compute) && e.compute > 0,
                    "fuzz_recipe", "endpoint tokens or compute not finite and positive");
    }
    fuzz::require(std::isfinite(plan.total_compute), "fuzz_recipe", "total compute not finite");
  });
  return 0;
}
