// Calibration profiles, profile JSON (`--calibration FILE`, docs/calibration.md):
// parse_calibration_profile(). An accepted profile must validate and survive the documented round
// trip parse(to_json(p)) == p.
#include "budget/calibration.hpp"
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
  });
  return 0;
}
