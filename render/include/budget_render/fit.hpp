#pragma once
// A scaling-law fit's summary (budget/scaling_fit.hpp, FitSummary) as JSON: the "fit_summary" of
// `budget-match fit`'s JSON and of the coefficients file it writes (CoefficientsFile::fit_summary_json).

#include <nlohmann/json_fwd.hpp>

#include "budget/scaling_fit.hpp"

namespace budget::render {

/// {"termination", "converged", "objective", "rmse", "points", "starts", "starts_at_best",
///  "evaluations", "total_evaluations", "huber_delta", "b_fixed"[, "fixed_b_value"], "exponents_fixed"
///  [, "compute_range": [min C, max C]]}.
nlohmann::ordered_json fit_summary_json(const FitSummary& summary);

}  // namespace budget::render
