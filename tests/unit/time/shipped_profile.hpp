#pragma once
// The shipped H200 profile (cuda_profiler/profiles/h200-torch-eager.json), read once for the tests
// that time against it.

#include <string>

#include "budget/calibration.hpp"

namespace budget::test {

inline const CalibrationProfile& shipped_h200_profile() {
  static const CalibrationProfile p =
      load_calibration_profile(std::string(BUDGET_SOURCE_DIR) + "/cuda_profiler/profiles/h200-torch-eager.json");
  return p;
}

}  // namespace budget::test
