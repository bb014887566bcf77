#include "budget_render/fit.hpp"

#include <nlohmann/json.hpp>

namespace budget::render {

nlohmann::ordered_json fit_summary_json(const FitSummary& s) {
  // Keys in this order; an ordered_json appends the ones set after the list.
  nlohmann::ordered_json out{{"termination", to_string(s.termination)},
                             {"converged", s.usable()},
                             {"objective", s.objective},
                             {"rmse", s.rmse},
                             {"points", s.points},
                             {"starts", s.starts},
                             {"starts_at_best", s.starts_at_best},
                             {"evaluations", s.evaluations},
                             {"total_evaluations", s.total_evaluations},
                             {"huber_delta", s.huber_delta},
                             {"b_fixed", s.b_fixed}};
  if (s.b_fixed) out["fixed_b_value"] = s.fixed_b_value;
  out["exponents_fixed"] = s.exponents_fixed;
  if (s.max_compute > 0) out["compute_range"] = {s.min_compute, s.max_compute};
  return out;
}

}  // namespace budget::render
