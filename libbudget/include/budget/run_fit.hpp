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
/// errors over the fitted runs (at most 100 left out, evenly spaced: linear in the runs); the
/// validation runs are predicted by the fit of all fitted runs. A run whose measured step is
/// physically impossible on its GPU (model FLOPs above the dense peak, or shorter than one read of
/// its weights and optimizer states) is skipped with the reason; every run skipped is an error.
/// Progress and the time limit (budget/progress.hpp) are checked between runs and between fits.
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
#include "budget/megatron_args.hpp"
#include "budget/megatron_log.hpp"
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
  /// The run's sizes, split and training recipe (its FP8 recipe and main-gradient dtype among them:
  /// one value prices the run's memory and its time).
  ParallelLayout layout;
  bool cuda_graphs = false;
  CudaGraphModules cuda_graph_modules{};  ///< without cuda_graphs: the modules graphed all the same
  CommOverlap overlap{false, false, false, false, false};
  MoeDispatchOptions moe;  ///< the MoE dispatcher's settings beyond the layout (pad to capacity, router fusion, ...)
  double step_time_s = 0;
  double memory_gib = -1;  ///< peak allocated memory, GiB (−1: not given)
  std::string megatron_args;  ///< the run's Megatron-LM arguments as given (or its log's, as words)
  std::vector<std::string> notes;  ///< what the reader assumed (Megatron arguments read but not modelled, ...)
  /// What a Megatron-Bridge config ("bridge_config", or a Bridge log's Task Configuration) said beyond
  /// Megatron-LM's arguments (the FP8 transpose cache, TP-overlap settings, environment variables):
  /// recorded for the cost model, not modelled yet (listed in `notes`).
  BridgeOnlySettings bridge;
};

/// Reads run lines (docs/calibration.md, "Run files"); errors name `source` and "line <n>/<field>".
/// A run gives its layout as "layout" (ParallelLayout's fields, with "time"), or as "megatron_args"
/// (Megatron-LM's arguments, read by read_megatron_args()), or as the arguments block of its
/// "megatron_log" (a Megatron-LM log, a path relative to the run file's directory, which also gives
/// the step time and the peak memory).
std::vector<MeasuredRun> parse_measured_runs(std::string_view jsonl, const std::string& source);
std::vector<MeasuredRun> load_measured_runs(const std::string& path);

/// One run predicted.
struct RunPrediction {
  std::string id, role;
  double measured_s = 0;
  double before_s = 0;     ///< the profile's prediction without a run fit
  double predicted_s = 0;  ///< fitted runs: leave-one-run-out; validation runs: the full fit
  std::string skipped;     ///< why the run could not be predicted, or was implausible ("" when it was predicted)
  /// A fitted run not left out (past the leave-one-run-out's cap of 100 runs, evenly spaced):
  /// predicted_s is the fit of every run, itself included.
  bool in_sample = false;
  /// Peak allocated memory per GPU, GiB: the run's measurement (MeasuredRun::memory_gib) and
  /// training_memory()'s peak at the run's layout; both −1 when the run gives none.
  double measured_memory_gib = -1;
  double predicted_memory_gib = -1;
};

/// The fit of one precision.
struct RunFitResult {
  CalibrationRunFit fit;
  std::vector<RunPrediction> runs;
  double before_median_error = 0, before_max_error = 0;  ///< |before/measured − 1| over the predicted runs
  double validation_median_error = 0, validation_max_error = 0;
  std::size_t loo_runs = 0;  ///< fitted runs left out one at a time (all of them, or 100 evenly spaced)
};

/// What prices every run beyond its own recipe: the CPU time per kernel launch outside CUDA graphs
/// (TimeModelOptions::host_launch_seconds; the fitted constant unless a study varies it).
struct RunPricing {
  double host_launch_seconds = megatron_host_launch_seconds;
};

/// Fits `profile` (its own run_fits ignored) to the runs whose gpu is `gpu` (empty: the profile's
/// device name), one fit per precision present. `runs_name` is recorded in each fit.
std::vector<RunFitResult> fit_measured_runs(const CalibrationProfile& profile, const std::vector<MeasuredRun>& runs,
                                            const std::string& runs_name, const std::string& gpu = {},
                                            const RunPricing& pricing = {});

/// The step time of one run under `profile` (its run fit for the run's precision applied, if any).
double predict_measured_run(const CalibrationProfile& profile, const MeasuredRun& run, const RunPricing& pricing = {});

}  // namespace budget
