#pragma once
// Private to the runs domain: whether a measured run is physically possible on its GPU
// (docs/calibration.md, "Implausible runs"), checked before the run is fitted or validated.
#include <string>

#include "budget/run_fit.hpp"

namespace budget::runs_detail {

/// "" when the measured step is possible, else why not (one line, with the numbers): the run's
/// model FLOPs a GPU a step over its measured step above the dense tensor-core peak of its
/// precision, or its measured step shorter than one read of the weights and optimizer states its
/// busiest GPU holds at the GPU's memory bandwidth. The run is priced
/// under `unit_model` (the profile at unit factors, the run's precision), whose MFU carries the
/// model FLOPs. budget::Error where the run cannot be priced (as the fit's own pricing).
std::string implausible_run_reason(const TimeModel& unit_model, const MeasuredRun& run);

}  // namespace budget::runs_detail
