#pragma once
/// \file
/// Calibrating the step-time model from measured training runs (docs/calibration.md, "Calibrating
/// from runs"): a run file (one JSON object a line: the config, the cluster, the layout in
/// ParallelLayout's fields, the kernel options, the measured step time and memory, optionally the
/// run's Megatron-LM arguments) is read strictly; the runs of a profile's GPU are predicted with
/// the profile, and a small set of factors is fitted per training precision:
///
///   step = f_gemm·T_gemm + f_attn·T_attn + f_expert·T_expert + f_mem·T_mem
///          + g_intra·C_intra + g_inter·C_inter + overhead
///
/// T_c the predicted step's compute of class c and C_l its exposed communication over link class l
/// at unit factors (each found as the step's change when its factor is doubled: exact while the
/// slowest stage stays the slowest). Non-negative least squares in relative error, with a prior of
/// one run's weight pulling each factor to 1 (a factor no run exercises stays 1). Leave-one-run-out
/// errors over the fitted runs; the validation runs are predicted by the fit of all fitted runs.
///
/// Thread safety: reentrant.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "budget/calibration.hpp"
#include "budget/cluster.hpp"
#include "budget/communication.hpp"
#include "budget/config.hpp"
#include "budget/parallel_layout.hpp"
#include "budget/time_model.hpp"

namespace budget {

struct MeasuredRun {
  std::string id;
  std::string role;    ///< "fit" or "validate"
  std::string source;  ///< where it was measured / published
  std::string gpu;     ///< the GPU as a profile names it (CalibrationDevice::name)
  ArchConfig config;
  ClusterSpec cluster;
  ParallelLayout layout;
  Fp8Recipe fp8 = Fp8Recipe::none;
  bool cuda_graphs = false;
  CommOverlap overlap{false, false, false, false, false};
  double step_time_s = 0;
  double memory_gib = -1;  ///< peak allocated memory, GiB (−1: not given)
  std::string megatron_args;  ///< the run's Megatron-LM arguments (for the Megatron-arguments reader)
};

/// Reads run lines (docs/calibration.md, "Run files"); errors name `source` and "line <n>/<field>".
/// A run with "megatron_args" but no "layout" is refused: "megatron_args needs the
/// Megatron-arguments reader".
std::vector<MeasuredRun> parse_measured_runs(std::string_view jsonl, const std::string& source);
std::vector<MeasuredRun> load_measured_runs(const std::string& path);

/// One run predicted.
struct RunPrediction {
  std::string id, role;
  double measured_s = 0;
  double before_s = 0;     ///< the profile's prediction without a run fit
  double predicted_s = 0;  ///< fitted runs: leave-one-run-out; validation runs: the full fit
  std::string skipped;     ///< why the run could not be predicted ("" when it was)
};

/// The fit of one precision.
struct RunFitResult {
  CalibrationRunFit fit;
  std::vector<RunPrediction> runs;
  double before_median_error = 0, before_max_error = 0;  ///< |before/measured − 1| over the predicted runs
  double validation_median_error = 0, validation_max_error = 0;
};

/// Fits `profile` (its own run_fits ignored) to the runs whose gpu is `gpu` (empty: the profile's
/// device name), one fit per precision present. `runs_name` is recorded in each fit.
std::vector<RunFitResult> fit_measured_runs(const CalibrationProfile& profile, const std::vector<MeasuredRun>& runs,
                                            const std::string& runs_name, const std::string& gpu = {});

/// The step time of one run under `profile` (its run fit for the run's precision applied, if any).
double predict_measured_run(const CalibrationProfile& profile, const MeasuredRun& run);

}  // namespace budget
