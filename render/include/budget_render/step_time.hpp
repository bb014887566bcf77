#pragma once
// Predicted step time (budget/time_model.hpp) as JSON and as a table, shared by report, match and
// grid.

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "budget/time_model.hpp"
#include "budget_render/table.hpp"

namespace budget::render {

/// The `time` object of the JSON outputs: profile, tokens_per_step, seconds_per_step,
/// seconds_per_token, tokens_per_second, mfu, attention_backend, out_of_range, by_op.
nlohmann::ordered_json step_time_json(const StepTime& time, const TimeModel& model);

/// Per-op time beside per-op training FLOPs per step, with shares, achieved TFLOP/s and notes.
Table step_time_table(const StepTime& time);

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

}  // namespace budget::render
