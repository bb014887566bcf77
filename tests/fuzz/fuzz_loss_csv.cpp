// Loss CSV files for `fit` and `ce-gain --bootstrap`: parse_loss_csv(). Accepted points must be
// finite with F > 0, D > 0, loss > 0 and 0 <= S < 1 (the documented contract), and each
// architecture name must be writable as the `arch` of a coefficients file (`fit --out`) that
// reads back.
#include <cmath>

#include "budget/scaling_data.hpp"
#include "budget/scaling_law.hpp"
#include "fuzz_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace budget;
  fuzz::expect_value_or_error("fuzz_loss_csv", [&] {
    const LossData loss_data = parse_loss_csv(fuzz::as_text(data, size), "<fuzz>");
    fuzz::require(!loss_data.points.empty(), "fuzz_loss_csv", "accepted a file with no data rows");
    for (const LossPoint& p : loss_data.points) {
      fuzz::require(std::isfinite(p.F) && p.F > 0 && std::isfinite(p.D) && p.D > 0 && std::isfinite(p.loss) &&
                        p.loss > 0 && p.S >= 0 && p.S < 1 && !p.arch.empty(),
                    "fuzz_loss_csv", "accepted a point outside the documented domain");
    }
    fuzz::must_succeed("fuzz_loss_csv", "writing the arch to a coefficients file", [&] {
      CoefficientsFile file;
      file.arch = loss_data.points.front().arch;
      file.coefficients = ScalingCoefficients{1.7, 400.0, 400.0, 0.3, 0.1, 0.3};
      (void)parse_coefficients_json(coefficients_to_json(file), "<written>");
    });
  });
  return 0;
}
