// Grid files (`grid --grid`, `plan --grid`): parse_grid(). Every accepted cell's baseline must
// account to finite budgets under the paper workload.
#include <cmath>

#include "budget/accounting.hpp"
#include "budget/grid.hpp"
#include "fuzz_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace budget;
  fuzz::expect_value_or_error("fuzz_grid", [&] {
    const Grid grid = parse_grid(fuzz::as_text(data, size), "<fuzz>");
    fuzz::must_succeed("fuzz_grid", "accounting the cells", [&] {
      for (const GridCell& cell : grid.cells) {
        const Budgets budgets = account(cell.baseline, paper_workload());
        fuzz::require(std::isfinite(budgets.training_flops_per_token), "fuzz_grid", "FLOPs not finite");
      }
    });
  });
  return 0;
}
