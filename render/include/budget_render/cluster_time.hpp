#pragma once
// A training step's time on a cluster (budget/cluster_time.hpp) as JSON: the `time` object of
// `budget-match layout --format json`, of each layout a search keeps, of the cluster ranking's
// candidates and of Python's budget.layout() (schema in docs/cluster.md, "Step time").

#include <nlohmann/json_fwd.hpp>

#include "budget/cluster_time.hpp"

namespace budget::render {

/// {"seconds_per_step", "tokens_per_step", "tokens_per_second_per_gpu", "mfu", "mfu_denominator",
/// "slowest_stage", "by_component": {name: {"seconds", "overlapped"}}, "stages": [...],
/// "out_of_range", "compute_timed_on": {...}, "validation": [each cost line and the runs that
/// validated it (cost_line_validation())], "notes"}.
nlohmann::ordered_json cluster_step_time_json(const ClusterStepTime& time);

/// A run's cost (run_cost()): {"wall_clock_seconds", "gpu_hours", "steps"}, the `time.run` object of
/// `--run-tokens`.
nlohmann::ordered_json run_cost_json(const RunCost& run);

}  // namespace budget::render
