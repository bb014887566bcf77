// What a profile's calibration adds to a step on N GPUs (docs/calibration.md, "Calibrating from
// runs", "Provenance"): the run fit's link factors and constant per step, and the notes on the
// kernel stack, the FP8 recipe and where the compute's times come from.
#include <string>

#include <fmt/format.h>

#include "budget/cluster_time.hpp"
#include "step_time/step_compute.hpp"

namespace budget {

void apply_run_fit_to_communication(const TimeModel& model, std::vector<StageCommunication>& communication) {
  const CalibrationRunFit* fit = model.run_fit();
  if (fit == nullptr) return;
  for (StageCommunication& stage : communication) {
    stage.exposed_seconds = stage.overlapped_seconds = 0.0;
    for (CommTerm& term : stage.terms) {
      term.seconds_per_step *= term.kind == CollectiveKind::all_to_all ? fit->all_to_all
                               : term.group.inter_node()             ? fit->inter_node
                                                                     : fit->intra_node;
      (term.overlapped ? stage.overlapped_seconds : stage.exposed_seconds) += term.seconds_per_step;
    }
  }
}

namespace {
/// The notes on the shares of the slowest stage's compute extrapolated or assumed.
void set_provenance_notes(ClusterStepTime& out) {
  double known = 0.0;
  for (double s : out.provenance_share) known += s;
  if (known <= 0.0) return;  // the indexed path: not known
  const double past = out.provenance_share[static_cast<std::size_t>(TimeProvenance::extrapolated)];
  const double assumed = out.provenance_share[static_cast<std::size_t>(TimeProvenance::assumed)];
  if (past > 0.0) {
    out.notes.push_back(fmt::format("{:.1f}% of the slowest stage's compute is extrapolated past the profile's rows",
                                    100.0 * past));
  }
  if (assumed > 0.0) {
    out.notes.push_back(fmt::format("{:.1f}% of the slowest stage's compute has no rows: FLOPs or bytes at the "
                                    "profile's peaks (assumed)",
                                    100.0 * assumed));
  }
}
}  // namespace

void set_step_time_calibration(ClusterStepTime& out, const TimeModel& model) {
  const TimeModelOptions& o = model.options();
  const bool megatron = o.stack == KernelStack::megatron_core_te ||
                        (o.stack == KernelStack::profile && model.profile().source.stack == "megatron-core-te");
  out.stack = megatron ? "megatron-core-te" : "pytorch-eager";
  out.fp8_recipe = o.recipe.fp8;
  if (const CalibrationRunFit* fit = model.run_fit()) {
    out.run_fit_precision = fit->precision;
    out.overhead_seconds = fit->overhead_s;
    out.seconds_per_step += fit->overhead_s;
    // No figure of accuracy without runs behind it (issue 42): a fit on no runs says so.
    const std::string accuracy =
        fit->fitted_on.empty()
            ? std::string("fitted on no runs: no leave-one-run-out figures")
            : fmt::format("{} runs fitted; leave-one-run-out median |error| {:.1f}%, worst {:.1f}%",
                          fit->fitted_on.size(), 100 * fit->loo_median_error, 100 * fit->loo_max_error);
    out.notes.push_back(fmt::format(
        "calibrated on measured runs ({}, {}): compute factors gemm {:.3f}, attention {:.3f}, expert GEMMs {:.3f}, "
        "memory-bound {:.3f}; links intra-node {:.3f}, inter-node {:.3f}, all-to-all {:.3f}; {:.2f} µs a launch "
        "beyond the stack's own host time per launch; {:.4f} s a step",
        to_string(fit->precision), accuracy, fit->gemm, fit->attention, fit->expert_gemms, fit->memory_bound,
        fit->intra_node, fit->inter_node, fit->all_to_all, fit->launch_us, fit->overhead_s));
  }
  set_provenance_notes(out);
}


}  // namespace budget
