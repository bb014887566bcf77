// Whole-layer calibration rows (`calibrate --layers FILE`, a profile's "layers", docs/calibration.md
// "Whole layers"): parse_layer_measurements(). Accepted rows must hold plausible times (the op
// rows' bounds) and read back through a profile's JSON; the shipped H200 profile with these rows as
// its layers either refuses by name or gives a layer correction with finite factors and errors, and
// a finite, non-negative layer time for the paper baseline (a row of 1e-300 ms once gave a 300-digit
// error percentage and silently dropped the correction).
#include <cmath>
#include <string>

#include "budget/calibration.hpp"
#include "budget/time_model.hpp"
#include "fuzz_harness.hpp"

namespace {

/// The shipped profile (its per-op rows and peaks), read once; the replay build and CI run from the
/// repository root, the fuzz build's runs too (scripts/fuzz.sh).
const budget::CalibrationProfile* shipped_profile() {
  static const budget::CalibrationProfile* profile = [] () -> const budget::CalibrationProfile* {
    try {
      return new budget::CalibrationProfile(
          budget::load_calibration_profile("cuda_profiler/profiles/h200-torch-eager.json"));
    } catch (const budget::Error&) {
      return nullptr;  // run from elsewhere: the parse and round trip are still checked
    }
  }();
  return profile;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace budget;
  fuzz::expect_value_or_error("fuzz_layer_rows", [&] {
    const std::vector<CalibrationLayerRow> rows = parse_layer_measurements(fuzz::as_text(data, size), "<fuzz>");
    for (const CalibrationLayerRow& row : rows) {
      fuzz::require(row.layer_ms >= 1e-6 && row.layer_ms <= 1e9, "fuzz_layer_rows", "an implausible layer time");
    }
    const CalibrationProfile* shipped = shipped_profile();
    if (shipped == nullptr) return;
    CalibrationProfile profile = *shipped;
    profile.layers = rows;
    fuzz::must_succeed("fuzz_layer_rows", "the profile's round trip", [&] {
      const CalibrationProfile back = parse_calibration_profile(calibration_profile_to_json(profile), "<round trip>");
      fuzz::require(back.layers == rows, "fuzz_layer_rows", "the rows' JSON does not read back to the rows");
    });
    const TimeModel model(profile);
    const LayerCorrection& c = model.layer_correction();
    fuzz::require(std::isfinite(c.launch_ms) && std::isfinite(c.median_relative_error) &&
                      std::isfinite(c.max_relative_error),
                  "fuzz_layer_rows", "the layer correction is not finite");
    for (const double f : c.factor) fuzz::require(std::isfinite(f) && f >= 0, "fuzz_layer_rows", "a factor is not finite");
    const LayerTime t = predict_layer_time(model, fuzz::paper_baseline(), 32768, 4096);
    fuzz::require(std::isfinite(t.ms) && t.ms >= 0, "fuzz_layer_rows", "a layer time is not finite and non-negative");
  });
  return 0;
}
