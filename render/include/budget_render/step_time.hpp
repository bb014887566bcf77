#pragma once
// Predicted step time (budget/time_model.hpp) as JSON and as a table, shared by report, match and
// grid.

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "budget/cluster_time.hpp"
#include "budget/gpu_fit.hpp"
#include "budget/time_model.hpp"
#include "budget_render/table.hpp"

namespace budget::render {

/// The out-of-range note fragments ("; "-separated, as the time model writes them: "expert
/// width 14336 is 14× the largest measured (1024)") one output has said, so that each is said
/// once per output however many passes, ops or candidates repeat it. Other fragments (an op's
/// own notes, e.g. "no rows: ...") are always kept.
class SaidNotes {
 public:
  /// `note` without the out-of-range fragments said before (in this note or earlier in the
  /// output); those it keeps count as said. When nothing is left but repeats: "as above".
  std::string say(const std::string& note);

 private:
  std::vector<std::string> said_;
};

/// The `time` object of the JSON outputs: profile, tokens_per_step, seconds_per_step,
/// seconds_per_token, tokens_per_second, mfu, attention_backend, out_of_range, by_op. Each op's
/// note goes through `said` (one output's SaidNotes, e.g. the baseline and every candidate of a
/// match); without one, through a SaidNotes of this time alone.
nlohmann::ordered_json step_time_json(const StepTime& time, const TimeModel& model, SaidNotes* said = nullptr);

/// A step time with what it is worth: step_time_json() plus "seconds_per_step_relative_error"
/// (accuracy.step_relative_error, the ± of seconds_per_step as a fraction) and "accuracy"
/// (time_accuracy_json()). The `time` object of `report --calibration` and Python's predict_time().
nlohmann::ordered_json step_time_with_accuracy_json(const StepTime& time, const TimeModel& model,
                                                    const TimeAccuracy& accuracy, SaidNotes* said = nullptr);

/// Whether the timed config fits one GPU of the profile's kind (budget/gpu_fit.hpp), as the keys
/// a `time` object gains: "fits_one_gpu" (true, false, or null when the capacity is unknown) and
/// "one_gpu_memory": {"gpu", "capacity_source" ("profile", "cluster_example", "unknown"),
/// "capacity_from", "capacity_bytes", "needed_bytes" (null when unknown), "smallest_layout"
/// (when it does not fit: {"gpus", "tp", "pp", "dp", "ep", "recompute", "peak_bytes"}, null if
/// none fits), "note"}.
void add_one_gpu_fit_json(nlohmann::ordered_json& time, const OneGpuFit& fit);

/// Per-op time beside per-op training FLOPs per step, with shares, achieved TFLOP/s and notes
/// (each note fragment once, as SaidNotes says it; `said` as for step_time_json()).
Table step_time_table(const StepTime& time, SaidNotes* said = nullptr);

/// MFU with its denominator: "31.2% of the profile's measured GEMM peak 760 TFLOP/s (24.0% of the
/// datasheet's 989 TFLOP/s)" (the datasheet part where the profile carries one).
std::string mfu_text(const StepTime& time, const TimeModel& model);
/// "the profile's measured bf16 GEMM peak, 760 TFLOP/s".
std::string mfu_denominator_text(const StepTime& time);

/// "NVIDIA H200, pytorch-eager (torch 2.11.0+cu130)".
std::string profile_label(const TimeModel& model);

/// A time ratio as "1.234×" (half_width 0: exact), or with its interval rounded to the interval's
/// precision: the ± to one significant digit, the ratio to as many decimals ("1.29× ±0.05").
std::string time_ratio_text(double ratio, double half_width = 0);

/// Decimals of a time ratio whose ± is `half_width` (that of its one-significant-digit rounding,
/// at most 4); 3 for half_width ≤ 0.
int time_ratio_decimals(double half_width);

/// The interval of a time ratio as JSON: {"low", "high", "half_width"}.
nlohmann::ordered_json time_ratio_interval_json(double ratio, const TimeAccuracy& accuracy);

/// The accuracy behind the intervals as JSON: {"source", "from_layers", "ratio_error" (layers) or
/// "step_relative_error", "validated"}.
nlohmann::ordered_json time_accuracy_json(const TimeAccuracy& accuracy);

/// Each cost line of a cluster step and the measured runs that validated it
/// (budget::cost_line_validation()): a heading and one line a cost line.
std::string cost_validation_text(const ClusterStepTime& time);

}  // namespace budget::render
