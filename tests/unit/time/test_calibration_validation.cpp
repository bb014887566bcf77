// validation_error(CalibrationProfile) and validate(CalibrationProfile): the reader's checks for
// profiles built in code.

#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "budget/calibration.hpp"
#include "budget/error.hpp"

using namespace budget;

TEST_CASE("validation_error(CalibrationProfile) is empty when valid and names the field otherwise", "[time]") {
  const CalibrationProfile shipped =
      load_calibration_profile(std::string(BUDGET_SOURCE_DIR) + "/cuda_profiler/profiles/h200-torch-eager.json");
  CHECK(validation_error(shipped).empty());
  CHECK_NOTHROW(validate(shipped));
  REQUIRE_FALSE(shipped.rows.empty());
  CalibrationProfile bad = shipped;
  bad.device.name.clear();
  const std::string message = validation_error(bad, "p.json");
  CHECK_THAT(message, Catch::StartsWith("p.json: /device/name: "));
  CHECK_THAT(message, Catch::Contains("allowed: a non-empty string"));
  try {
    validate(bad, "p.json");
    FAIL("validate() did not throw");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == message);
  }
  bad = shipped;
  bad.rows.front().ms = std::numeric_limits<double>::quiet_NaN();
  CHECK_THAT(validation_error(bad), Catch::Contains("/rows/0"));
}
