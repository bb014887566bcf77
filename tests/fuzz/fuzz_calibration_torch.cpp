// Calibration measurements, PyTorch-eager lines (".jsonl", docs/calibration.md):
// parse_torch_measurements(). The profile it builds must validate and survive the profile JSON
// round trip.
#include "budget/calibration.hpp"
#include "fuzz_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace budget;
  fuzz::expect_value_or_error("fuzz_calibration_torch", [&] {
    const CalibrationProfile profile = parse_torch_measurements(fuzz::as_text(data, size), "<fuzz>");
    fuzz::must_succeed("fuzz_calibration_torch", "validation and round trip", [&] {
      validate(profile, "<fuzz>");
      fuzz::require(parse_calibration_profile(calibration_profile_to_json(profile), "<round trip>") == profile,
                    "fuzz_calibration_torch", "profile JSON round trip changed the profile");
    });
  });
  return 0;
}
