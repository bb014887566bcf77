// Whether a measured run is physically possible on its GPU (run_plausibility.hpp;
// docs/calibration.md, "Implausible runs").
#include "runs/run_plausibility.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "budget/cluster_time.hpp"
#include "budget/training_memory.hpp"
#include "runs/run_detail.hpp"

namespace budget::runs_detail {

namespace {

/// The dense tensor-core peak of the run's GEMM precision a GPU, FLOP/s, and what it is: BF16 the
/// largest of the datasheet's dense BF16 peak (profile or cluster file) and the profile's measured
/// 8192³ GEMM rate; FP8 the datasheet's dense FP8 peak where the profile gives one, else twice the
/// BF16 peak (the dense FP8 peak is twice BF16's on the Hopper and Blackwell datasheets: H100 SXM
/// 1979 / 989 TFLOP/s, B200 4500 / 2250). No run's model FLOPs can exceed it.
std::pair<double, std::string> dense_peak_flops_per_s(const CalibrationProfile& profile, const MeasuredRun& run) {
  const CalibrationPeaks& p = profile.peaks;
  const double bf16 = std::max({p.datasheet_peak_tflops * 1e12, p.bf16_gemm_tflops * 1e12,
                                run.cluster.compute.peak_bf16_dense_flops_per_s});
  if (run.layout.fp8 == Fp8Recipe::none) return {bf16, "the GPU's dense BF16 peak"};
  if (p.datasheet_fp8_tflops > 0) return {std::max(p.datasheet_fp8_tflops * 1e12, bf16), "the GPU's dense FP8 peak"};
  return {2.0 * bf16, "twice the GPU's dense BF16 peak (FP8)"};
}

/// Bytes of weights and optimizer states on the GPU that holds the most (every step reads each at
/// least once: the forward pass the weights, the optimizer step the states).
double state_bytes_read_once(const TrainingMemory& memory) {
  double most = 0.0;
  for (const StageMemory& s : memory.stages) most = std::max(most, s.by_component.weights + s.by_component.optimizer_states);
  return most;
}

}  // namespace

std::string implausible_run_reason(const TimeModel& unit_model, const MeasuredRun& run) {
  const TrainingMemory memory = training_memory(run.config, run.layout, run.cluster, run.id);
  const ClusterStepTime step = cluster_step_time(unit_model, run.config, memory, run.cluster, run_time_options(run));
  // Model FLOPs a GPU a step (cluster_time.hpp: MFU = model FLOPs / (step · GPUs · peak)), taken
  // back from the priced step's MFU so that the count is the one `report` prints.
  const double model_flops_per_gpu = step.mfu * step.seconds_per_step * step.mfu_peak_flops_per_s;
  const auto [peak, peak_name] = dense_peak_flops_per_s(unit_model.profile(), run);
  const double measured_mfu = model_flops_per_gpu / (run.step_time_s * peak);
  if (!(measured_mfu <= 1.0)) {
    return fmt::format("implausible: a step of {:.3g} s is {:.3g} TFLOP/s of model FLOPs a GPU ({:.3g} TFLOP a GPU a "
                       "step), above {} of {:.4g} TFLOP/s (MFU {:.3g}%)",
                       run.step_time_s, model_flops_per_gpu / run.step_time_s / 1e12, model_flops_per_gpu / 1e12,
                       peak_name, peak / 1e12, 100.0 * measured_mfu);
  }
  // The profile's copy rate (bytes read + written a second) stands for the HBM bandwidth.
  const double bandwidth = unit_model.profile().peaks.copy_gbytes_per_s * 1e9;
  const double read_once_s = state_bytes_read_once(memory) / bandwidth;
  if (!(run.step_time_s >= read_once_s)) {
    return fmt::format("implausible: a step of {:.3g} s is shorter than one read of the {:.3g} GiB of weights and "
                       "optimizer states a GPU holds at {:.4g} GB/s ({:.3g} s)",
                       run.step_time_s, state_bytes_read_once(memory) / (1024.0 * 1024.0 * 1024.0), bandwidth / 1e9,
                       read_once_s);
  }
  return {};
}

}  // namespace budget::runs_detail
