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

/// "NVIDIA H200, pytorch-eager (torch 2.11.0+cu130)".
std::string profile_label(const TimeModel& model);

/// A time ratio as "1.234×".
std::string time_ratio_text(double ratio);

}  // namespace budget::render
