// The fit's options (validation_error()) and summary (brief(), full_report()): budget/scaling_fit.hpp.
// The summary's JSON is render/'s (budget_render/fit.hpp).
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "budget/scaling_fit.hpp"
#include "base/enum_names.hpp"

namespace budget {

// ---------------------------------------------------------------------------------------------
// Options and summary

namespace {
std::string check_list(const char* name, const std::vector<double>& values, double lo, double hi) {
  if (values.empty()) return fmt::format("grid.{} is empty; give at least one value", name);
  for (double v : values) {
    if (!std::isfinite(v) || v < lo || v > hi) {
      return fmt::format("grid.{} value {} is not allowed; allowed: values in [{}, {}]", name, v, lo, hi);
    }
  }
  return {};
}
}  // namespace

std::string FitOptions::validation_error() const {
  // Residuals are of log-loss (|r| ~ 1e-3 .. 1): below 1e-6 the Huber loss is linear in every
  // residual and its scale falls under the optimiser's tolerances (the start values came back as
  // "converged"); above 10 it is least squares.
  if (!(huber_delta >= min_huber_delta && huber_delta <= max_huber_delta)) {
    return fmt::format("huber_delta = {:g} is not allowed; allowed: a number in [{:g}, {:g}]", huber_delta,
                       min_huber_delta, max_huber_delta);
  }
  const FitBounds& b = bounds;
  if (!(b.exponent_min < b.exponent_max) || !(b.log_E_min < b.log_E_max) || !(b.log_term_min < b.log_term_max)) {
    return "bounds: every lower bound must be below its upper bound";
  }
  if (b.exponent_min < 0.0) return fmt::format("bounds.exponent_min = {} is not allowed; allowed: ≥ 0", b.exponent_min);
  if (!std::isfinite(fixed_b)) return "fixed_b must be finite";
  if (use_grid) {
    for (const auto& message : {check_list("a", grid.a, b.exponent_min, b.exponent_max),
                                check_list("b", grid.b, b.exponent_min, b.exponent_max),
                                check_list("c", grid.c, b.exponent_min, b.exponent_max)}) {
      if (!message.empty()) return message;
    }
    for (double f : grid.e_fraction) {
      if (!(f > 0.0 && f < 1.0)) {
        return fmt::format("grid.e_fraction value {} is not allowed; allowed: values in (0, 1)", f);
      }
    }
    if (grid.e_fraction.empty()) return "grid.e_fraction is empty; give at least one value";
  } else if (extra_starts.empty()) {
    return "use_grid is false and extra_starts is empty: there is no starting point";
  }
  if (!(ftol_rel >= 0.0) || !(xtol_rel >= 0.0)) return "ftol_rel and xtol_rel must be ≥ 0";
  if (max_evaluations < 1) return fmt::format("max_evaluations = {} is not allowed; allowed: ≥ 1", max_evaluations);
  if (!(same_objective_rel >= 0.0)) return "same_objective_rel must be ≥ 0";
  return {};
}

namespace {
constexpr auto fit_termination_names = detail::enum_names<FitTermination::failure>({
    {FitTermination::function_tolerance, "ftol_rel reached"}, {FitTermination::parameter_tolerance, "xtol_rel reached"},
    {FitTermination::success, "success"}, {FitTermination::roundoff_limited, "roundoff limited"},
    {FitTermination::max_evaluations, "max_evaluations reached"}, {FitTermination::failure, "failure"}});
}  // namespace

std::string to_string(FitTermination termination) {
  return std::string(detail::name_of(fit_termination_names, termination, "unknown"));
}

bool FitSummary::usable() const {
  return termination != FitTermination::max_evaluations && termination != FitTermination::failure;
}

namespace {
std::string held_text(const FitSummary& s) {
  if (s.exponents_fixed) return "; exponents a, b, c held (intercept-only fit)";
  if (s.b_fixed) return fmt::format("; b held at {:g} (every point has the same S)", s.fixed_b_value);
  return {};
}
}  // namespace

std::string FitSummary::brief() const {
  return fmt::format("{} ({}) after {} evaluations; objective {:.6g}, RMSE {:.4g}%, {}/{} starts reached the best; "
                     "{} points{}",
                     usable() ? "converged" : "NOT converged", to_string(termination), evaluations, objective,
                     100.0 * rmse, starts_at_best, starts, points, held_text(*this));
}

std::string FitSummary::full_report() const {
  std::string out;
  out += fmt::format("termination         : {}{}\n", to_string(termination), usable() ? "" : " (not usable)");
  out += fmt::format("objective           : {:.10g} (sum of Huber(delta = {:g}) over log-loss residuals)\n",
                     objective, huber_delta);
  out += fmt::format("RMSE of log-loss    : {:.6g}\n", rmse);
  out += fmt::format("points              : {}\n", points);
  out += fmt::format("starts              : {} ({} reached the best)\n", starts, starts_at_best);
  out += fmt::format("evaluations         : {} (best start), {} (all starts)\n", evaluations, total_evaluations);
  if (exponents_fixed) out += "held parameters     : a, b, c (intercept-only fit)\n";
  if (b_fixed) out += fmt::format("held parameters     : b = {:g} (every point has the same S)\n", fixed_b_value);
  return out;
}

}  // namespace budget
