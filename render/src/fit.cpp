#include "budget_render/fit.hpp"

#include <nlohmann/json.hpp>

namespace budget::render {

nlohmann::ordered_json fit_summary_json(const FitSummary& s) {
  nlohmann::ordered_json out;
  out["termination"] = to_string(s.termination);
  out["converged"] = s.usable();
  out["objective"] = s.objective;
  out["rmse"] = s.rmse;
  out["points"] = s.points;
  out["starts"] = s.starts;
  out["starts_at_best"] = s.starts_at_best;
  out["evaluations"] = s.evaluations;
  out["total_evaluations"] = s.total_evaluations;
  out["huber_delta"] = s.huber_delta;
  out["b_fixed"] = s.b_fixed;
  if (s.b_fixed) out["fixed_b_value"] = s.fixed_b_value;
  out["exponents_fixed"] = s.exponents_fixed;
  if (s.max_compute > 0) out["compute_range"] = {s.min_compute, s.max_compute};
  return out;
}

}  // namespace budget::render
