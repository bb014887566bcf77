// Workload JSON: parse_workload(), document-length sources included (distributions, inline
// histograms, files: relative paths resolve in a directory that does not exist). An accepted
// workload must give the paper baseline finite budgets.
#include <cmath>

#include "budget/accounting.hpp"
#include "budget/workload.hpp"
#include "fuzz_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace budget;
  fuzz::expect_value_or_error("fuzz_workload", [&] {
    const Workload workload = parse_workload(fuzz::as_text(data, size), "<fuzz>", "/nonexistent-budget-fuzz-dir");
    fuzz::require(std::isfinite(workload.attended_keys) && workload.attended_keys > 0 &&
                      std::isfinite(workload.kernel_attended_keys) && workload.kernel_attended_keys >= 0,
                  "fuzz_workload", "attended keys not finite and positive");
    fuzz::must_succeed("fuzz_workload", "accounting the paper baseline", [&] {
      const Budgets budgets = account(fuzz::paper_baseline(), workload);
      fuzz::require(std::isfinite(budgets.training_flops_per_token) && budgets.training_flops_per_token > 0,
                    "fuzz_workload", "training FLOPs per token not finite and positive");
    });
  });
  return 0;
}
