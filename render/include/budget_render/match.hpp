#pragma once
// Outputs of the matcher: JSON (versioned), aligned text and Markdown.

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "budget/grid.hpp"
#include "budget/match.hpp"
#include "budget/time_model.hpp"
#include "budget_render/table.hpp"

namespace budget::render {

nlohmann::ordered_json candidate_json(const Candidate& candidate);
/// A candidate's kernel fit: {"fit": native|padded|refused, "backend", "attention", "executed_head_dims"
/// (not when refused), "why" (empty when native)}.
nlohmann::ordered_json kernel_fit_json(const KernelFit& fit);
/// A table cell: "native", "padded→192" (the head dim the kernel executes), "refused".
std::string kernel_fit_cell(const KernelFit& fit);
/// summary.kernel_stack: the target (gpu, arch, attention backend and those tried, precision, GEMM
/// width multiple, per-expert token alignment, rule), {"portable": true, ...} for the default
/// space without one, null for the free lattice without one.
nlohmann::ordered_json kernel_stack_json(const MatchSummary& summary);
/// A candidate's range edges (Candidate::range_edges): [{"variable", "value", "bound": "lower" or
/// "upper", "limit", "widen"}].
nlohmann::ordered_json range_edges_json(const std::vector<RangeEdge>& edges);
/// `timings`: summary.seconds is the wall-clock time; else null, so that outputs are byte-identical.
nlohmann::ordered_json match_json(const MatchResult& result, const LoopSpec& loop, const Workload& workload,
                                  bool timings = false);
/// `time_ratios` (optional, parallel to the candidates): predicted time per token / the
/// baseline's, shown as a "time ×" column; with `accuracy`, each with its ± rounded to it
/// (time_ratio_text()).
std::string match_text(const MatchResult& result, const LoopSpec& loop, const Workload& workload,
                       const std::vector<double>& time_ratios = {}, const TimeAccuracy* accuracy = nullptr);
std::string match_markdown(const MatchResult& result, const LoopSpec& loop, const std::vector<double>& time_ratios = {},
                           const TimeAccuracy* accuracy = nullptr);

/// The document of `budget-match grid --format json` (and of budget.grid() in Python): one cell per
/// row with its baseline's config and budgets, the best matched candidate (null if infeasible),
/// the search summary and the paper's published max deviation (null if none).
nlohmann::ordered_json grid_json(const Grid& grid, const std::vector<GridRow>& rows, const LoopSpec& loop,
                                 const Workload& workload);

/// Constraint sensitivity (constraint_sensitivity()) as JSON and as a table against the result.
nlohmann::ordered_json sensitivity_json(const std::vector<ConstraintSensitivity>& sensitivity);
Table sensitivity_table(const MatchResult& result, const std::vector<ConstraintSensitivity>& sensitivity);

/// Baseline row followed by one row per candidate (with a "time ×" column when `time_ratios`,
/// parallel to the candidates, is given).
Table candidates_table(const MatchResult& result, const std::vector<double>& time_ratios = {},
                       const TimeAccuracy* accuracy = nullptr);

}  // namespace budget::render
