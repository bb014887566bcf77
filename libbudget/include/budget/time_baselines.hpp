#pragma once
/// \file
/// The baselines of a whole-layer validation checked against all their runs (docs/calibration.md,
/// "Validation on whole layers", issue 21's "the baseline of each cell not over-predicted").
///
/// A config has one prediction (one config, one fit), but its measured runs differ: on the H200
/// file run 2 is faster than run 1 for every config (baselines by 0.2–2.0%). A single prediction
/// therefore cannot lie below every run unless it is biased low. The convention here: the runs of a
/// baseline span a measured interval [fastest run, slowest run]; the baseline is **over-predicted**
/// when its prediction lies above the slowest run (above every measurement of it). Beside it, the
/// signed error against the mean of the runs, so either reading can be checked.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "budget/time_model.hpp"

namespace budget {

/// One baseline config of one cell, its runs together.
struct BaselineCheck {
  std::string cell, name;
  std::vector<std::int64_t> runs;   ///< the runs measured, in the validation's entry order
  std::vector<double> measured_ms;  ///< layer ms of each run, same order
  /// The prediction (the largest of the runs' entries, should they differ: they do not when all
  /// runs are of the same config and the same held-out fit).
  double predicted_ms = 0;
  double fastest_ms = 0, slowest_ms = 0, mean_ms = 0;  ///< min, max and mean of measured_ms
  double error_vs_mean = 0;     ///< predicted / mean − 1
  double error_vs_slowest = 0;  ///< predicted / slowest − 1 (> 0: over-predicted)
  bool over_predicted = false;  ///< predicted_ms > slowest_ms
};

struct BaselineChecks {
  std::vector<BaselineCheck> baselines;  ///< one per (cell, baseline name), in order of first entry
  std::size_t over_predicted = 0;        ///< baselines with over_predicted
  double max_error_vs_mean = 0;          ///< largest signed error_vs_mean (0 without baselines)
  double max_error_vs_slowest = 0;       ///< largest signed error_vs_slowest (0 without baselines)
};

/// The entries tagged "baseline" of `validation`, grouped by (cell, config name).
BaselineChecks check_baselines(const LayerValidation& validation);

}  // namespace budget
