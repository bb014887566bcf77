// Calibration profiles, profile JSON (`--calibration FILE`, docs/calibration.md):
// parse_calibration_profile(). An accepted profile must validate and survive the documented round
// trip parse(to_json(p)) == p. The time model fitted to it (TimeModel) then either refuses by
// name or predicts the paper baseline's step time as finite, non-negative numbers: no row set,
// however degenerate, may turn into a NaN, an infinite or a negative time.
#include <cmath>

#include "budget/calibration.hpp"
#include "budget/time_model.hpp"
#include "budget/workload.hpp"
#include "fuzz_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace budget;
  fuzz::expect_value_or_error("fuzz_calibration", [&] {
    const CalibrationProfile profile = parse_calibration_profile(fuzz::as_text(data, size), "<fuzz>");
    fuzz::must_succeed("fuzz_calibration", "validation and round trip", [&] {
      validate(profile, "<fuzz>");
      fuzz::require(parse_calibration_profile(calibration_profile_to_json(profile), "<round trip>") == profile,
                    "fuzz_calibration", "JSON round trip changed the profile");
    });
    const TimeModel model(profile);
    const StepTime t = predict_step_time(model, fuzz::paper_baseline(), paper_workload());
    const auto finite_non_negative = [](double x) { return std::isfinite(x) && x >= 0; };
    fuzz::require(finite_non_negative(t.seconds_per_step) && finite_non_negative(t.seconds_per_token) &&
                      finite_non_negative(t.mfu),
                  "fuzz_calibration", "a predicted step time is not finite and non-negative");
    for (const OpStepTime& op : t.by_op) {
      fuzz::require(finite_non_negative(op.seconds_per_step), "fuzz_calibration",
                    "an op's predicted time is not finite and non-negative");
    }
  });
  return 0;
}
