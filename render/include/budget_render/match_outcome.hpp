#pragma once
// The JSON document of `budget-match --baseline ... --format json` and of budget.match() in
// Python: match_json() plus the aligned alternative, the time section (with a model), the
// constraint sensitivity and the alignment trade-offs (with explain). Keys: docs/matching.md.

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "budget/match_outcome.hpp"

namespace budget::render {

/// `request` is the one match_outcome() ran with (its model, time options and explain flag);
/// `timings`: summary.seconds is the wall-clock time, else null (byte-identical outputs).
/// Lines for the table form when the outcome has a native reach (issue 43 item 5): the budgets
/// the native shapes cannot reach, the best native and best padded candidates side by side (with
/// their time ratios when timed), and the loop span suggested. Empty without one.
std::string native_reach_text(const MatchOutcome& outcome);
nlohmann::ordered_json match_outcome_json(const MatchOutcome& outcome, const LoopSpec& loop, const Workload& workload,
                                          const MatchRequest& request, bool timings = false);

/// With a model: one line per config, "memory: baseline fits one NVIDIA H200 (needs ...)" and
/// "memory: #1 does not fit one ... (...; smallest layout that fits: ...)" (OneGpuFit::note());
/// empty without one.
std::string one_gpu_fit_lines(const MatchOutcome& outcome);

}  // namespace budget::render
