#include "budget/scaling_fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <type_traits>

#include <fmt/format.h>
#include <nlopt.h>

#include "budget/error.hpp"
#include "scaling/scaling_minimizer.hpp"
#include "scaling/scaling_objective.hpp"
#include "base/parallel_for.hpp"

namespace budget {

using detail::CentredData;
using detail::HuberObjective;
using detail::Theta;

// ---------------------------------------------------------------------------------------------
// The search

namespace {

struct NloptDeleter {
  void operator()(nlopt_opt opt) const { nlopt_destroy(opt); }
};
using NloptHandle = std::unique_ptr<std::remove_pointer_t<nlopt_opt>, NloptDeleter>;

/// The free parameters of a fit and the values of the held ones.
struct Problem {
  const HuberObjective& objective;
  std::vector<int> free;  // indices into Theta
  Theta held;             // values of the held parameters (free entries are ignored)

  Theta expand(const double* x) const {
    Theta t = held;
    for (std::size_t i = 0; i < free.size(); ++i) t[static_cast<std::size_t>(free[i])] = x[i];
    return t;
  }
};

double nlopt_objective(unsigned n, const double* x, double* gradient, void* data) {
  const auto& problem = *static_cast<const Problem*>(data);
  Theta full_gradient{};
  const double f = problem.objective.evaluate(problem.expand(x), gradient ? &full_gradient : nullptr);
  if (gradient != nullptr) {
    for (unsigned i = 0; i < n; ++i) gradient[i] = full_gradient[static_cast<std::size_t>(problem.free[i])];
  }
  return f;
}

Theta lower_bounds(const FitBounds& b) {
  return {b.log_E_min, b.log_term_min, b.log_term_min, b.exponent_min, b.exponent_min, b.exponent_min};
}
Theta upper_bounds(const FitBounds& b) {
  return {b.log_E_max, b.log_term_max, b.log_term_max, b.exponent_max, b.exponent_max, b.exponent_max};
}

Theta clip(Theta t, const FitBounds& bounds) {
  const Theta lo = lower_bounds(bounds);
  const Theta hi = upper_bounds(bounds);
  for (std::size_t i = 0; i < t.size(); ++i) {
    t[i] = std::isnan(t[i]) ? lo[i] : std::clamp(t[i], lo[i], hi[i]);
  }
  return t;
}

FitTermination termination_of(nlopt_result result) {
  switch (result) {
    case NLOPT_FTOL_REACHED: return FitTermination::function_tolerance;
    case NLOPT_XTOL_REACHED: return FitTermination::parameter_tolerance;
    case NLOPT_SUCCESS:
    case NLOPT_STOPVAL_REACHED: return FitTermination::success;
    case NLOPT_ROUNDOFF_LIMITED: return FitTermination::roundoff_limited;
    case NLOPT_MAXEVAL_REACHED:
    case NLOPT_MAXTIME_REACHED: return FitTermination::max_evaluations;
    default: return FitTermination::failure;
  }
}

struct StartOutcome {
  Theta theta{};
  double objective = std::numeric_limits<double>::infinity();
  FitTermination termination = FitTermination::failure;
  int evaluations = 0;
};

/// The fit's objective over the free parameters of a problem, for the Newton minimiser.
class FreeParameterFunction final : public detail::MinimizerFunction {
 public:
  explicit FreeParameterFunction(const Problem& problem) : problem_(problem) {}

  double value(const detail::MinimizerVector& x, detail::MinimizerVector* gradient) override {
    Theta full_gradient{};
    const double f = problem_.objective.evaluate(problem_.expand(x.data()), gradient ? &full_gradient : nullptr);
    for (std::size_t i = 0; gradient != nullptr && i < problem_.free.size(); ++i) {
      (*gradient)[i] = full_gradient[static_cast<std::size_t>(problem_.free[i])];
    }
    return f;
  }
  void hessian(const detail::MinimizerVector& x, detail::MinimizerMatrix& out) override {
    std::array<double, detail::theta_size * detail::theta_size> full{};
    problem_.objective.hessian(problem_.expand(x.data()), full);
    const std::size_t n = problem_.free.size();
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        out[i * n + j] = full[static_cast<std::size_t>(problem_.free[i] * detail::theta_size + problem_.free[j])];
      }
    }
  }

 private:
  const Problem& problem_;
};

FitTermination termination_of(detail::MinimizerStop stop) {
  switch (stop) {
    case detail::MinimizerStop::function_tolerance: return FitTermination::function_tolerance;
    case detail::MinimizerStop::parameter_tolerance: return FitTermination::parameter_tolerance;
    case detail::MinimizerStop::stationary: return FitTermination::success;
    case detail::MinimizerStop::roundoff_limited: return FitTermination::roundoff_limited;
    case detail::MinimizerStop::max_evaluations: return FitTermination::max_evaluations;
  }
  return FitTermination::failure;
}

/// One run of the Newton minimiser from `start` over the free parameters of `problem`.
StartOutcome run_start_newton(const Problem& problem, const Theta& start, const FitOptions& options) {
  detail::MinimizerSettings settings;
  settings.n = static_cast<int>(problem.free.size());
  const Theta lo = lower_bounds(options.bounds);
  const Theta hi = upper_bounds(options.bounds);
  detail::MinimizerVector x{};
  for (std::size_t i = 0; i < problem.free.size(); ++i) {
    const auto k = static_cast<std::size_t>(problem.free[i]);
    x[i] = start[k];
    settings.lower[i] = lo[k];
    settings.upper[i] = hi[k];
  }
  settings.ftol_rel = options.ftol_rel;
  settings.xtol_rel = options.xtol_rel;
  settings.max_evaluations = options.max_evaluations;
  FreeParameterFunction function(problem);
  const detail::MinimizerOutcome found = detail::minimize_bounded(function, x, settings);
  StartOutcome outcome;
  outcome.termination = termination_of(found.stop);
  outcome.evaluations = found.evaluations;
  outcome.theta = problem.expand(found.x.data());
  outcome.objective = std::isfinite(found.f) ? found.f : std::numeric_limits<double>::infinity();
  return outcome;
}

/// One bounded L-BFGS run of NLopt from `start` over the free parameters of `problem`.
StartOutcome run_start_nlopt(const Problem& problem, const Theta& start, const FitOptions& options) {
  const auto n = static_cast<unsigned>(problem.free.size());
  NloptHandle opt(nlopt_create(NLOPT_LD_LBFGS, n));
  if (!opt) throw Error("NLopt could not create an L-BFGS optimiser");
  const Theta lo = lower_bounds(options.bounds);
  const Theta hi = upper_bounds(options.bounds);
  std::vector<double> x(n), lower(n), upper(n);
  for (unsigned i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(problem.free[i]);
    x[i] = start[k];
    lower[i] = lo[k];
    upper[i] = hi[k];
  }
  nlopt_set_lower_bounds(opt.get(), lower.data());
  nlopt_set_upper_bounds(opt.get(), upper.data());
  nlopt_set_min_objective(opt.get(), &nlopt_objective, const_cast<Problem*>(&problem));
  nlopt_set_ftol_rel(opt.get(), options.ftol_rel);
  nlopt_set_xtol_rel(opt.get(), options.xtol_rel);
  nlopt_set_maxeval(opt.get(), options.max_evaluations);

  StartOutcome outcome;
  double f = std::numeric_limits<double>::infinity();
  const nlopt_result result = nlopt_optimize(opt.get(), x.data(), &f);
  outcome.termination = termination_of(result);
  outcome.evaluations = nlopt_get_numevals(opt.get());
  outcome.theta = problem.expand(x.data());
  // Re-evaluate: after a failure NLopt may leave f unset; NaN never wins the comparison.
  const double value = problem.objective.evaluate(outcome.theta, nullptr);
  outcome.objective = std::isfinite(value) ? value : std::numeric_limits<double>::infinity();
  return outcome;
}

/// The data-adaptive starting intercepts (see MultistartGrid): E₀ = e_fraction·min L and each
/// power-law term at the data's centre equal to (L̄ − E₀)/2, L̄ the geometric-mean loss.
void set_start_intercepts(Theta& t, const CentredData& data, double e_fraction) {
  const double min_loss = std::exp(data.log_loss.minCoeff());
  const double mean_loss = std::exp(data.log_loss.mean());
  const double e0 = e_fraction * min_loss;
  const double term = 0.5 * (mean_loss - e0);
  t[detail::theta_log_E] = std::log(e0);
  t[detail::theta_alpha] = std::log(term);
  t[detail::theta_kappa] = std::log(term);
}

std::vector<Theta> grid_starts(const CentredData& data, const MultistartGrid& grid) {
  std::vector<Theta> starts;
  for (double a : grid.a)
    for (double c : grid.c)
      for (double b : grid.b)
        for (double e_fraction : grid.e_fraction) {
          Theta t{};
          t[detail::theta_a] = a;
          t[detail::theta_b] = b;
          t[detail::theta_c] = c;
          set_start_intercepts(t, data, e_fraction);
          starts.push_back(t);
        }
  return starts;
}

double rmse_of(const HuberObjective& objective, const Theta& theta) {
  const Eigen::ArrayXd r = objective.residuals(theta);
  return std::sqrt(r.square().mean());
}

/// Runs every start and summarises; `held` gives the values of parameters not in `free`. Starts run on
/// options.threads threads, each with its own objective and slot: the same outcomes on any count.
FitResult search(const std::vector<LossPoint>& points, const CentredData& data, const std::vector<int>& free,
                 const Theta& held, const std::vector<Theta>& starts, const FitOptions& options) {
  const HuberObjective objective(data, options.huber_delta);
  std::vector<StartOutcome> outcomes(starts.size());
  const auto run = [&](std::size_t i, const HuberObjective& own) {
    Theta s = held;
    for (int k : free) s[static_cast<std::size_t>(k)] = starts[i][static_cast<std::size_t>(k)];
    const Problem problem{own, free, held};
    outcomes[i] = options.minimizer == FitMinimizer::newton ? run_start_newton(problem, clip(s, options.bounds), options)
                                                            : run_start_nlopt(problem, clip(s, options.bounds), options);
  };
  const unsigned threads = detail::thread_count(options.threads, starts.size());
  if (threads > 1) {
    detail::parallel_for(starts.size(), threads, "scaling-law fit (starts)",
                         [&](std::size_t i) { run(i, HuberObjective(data, options.huber_delta)); });
  }
  for (std::size_t i = 0; threads <= 1 && i < starts.size(); ++i) run(i, objective);
  const auto best = std::min_element(outcomes.begin(), outcomes.end(), [](const auto& l, const auto& r) {
    return l.objective < r.objective;
  });

  FitResult result;
  result.coefficients = to_coefficients(best->theta, data);
  FitSummary& s = result.summary;
  s.termination = best->termination;
  s.evaluations = best->evaluations;
  s.objective = best->objective;
  s.rmse = rmse_of(objective, best->theta);
  s.huber_delta = options.huber_delta;
  s.points = points.size();
  s.starts = static_cast<int>(outcomes.size());
  const double tolerance =
      options.same_objective_rel * std::fabs(best->objective) + 1e-18 * static_cast<double>(points.size());
  for (const auto& o : outcomes) {
    s.total_evaluations += o.evaluations;
    if (o.objective - best->objective <= tolerance) ++s.starts_at_best;
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Input checks

void check_options(const FitOptions& options) {
  const std::string message = options.validation_error();
  if (!message.empty()) throw Error(message, "fit options");
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

void check_single_group(const std::vector<LossPoint>& points) {
  if (points.empty()) throw Error("there are no points to fit");
  const auto archs = architectures(points);
  if (archs.size() > 1) {
    throw Error(fmt::format("the points belong to several architectures ({}); fit each on its own", joined(archs)));
  }
  const bool mixed_domains = std::any_of(points.begin(), points.end(),
                                         [&](const LossPoint& p) { return p.domain != points.front().domain; });
  if (mixed_domains) {
    throw Error(fmt::format("the points of architecture \"{}\" mix domains; fit each domain on its own", archs[0]));
  }
}

std::size_t distinct_count(const std::vector<LossPoint>& points, double LossPoint::*member) {
  std::set<double> values;
  for (const auto& p : points) values.insert(p.*member);
  return values.size();
}

void check_enough_points(const std::vector<LossPoint>& points, std::size_t free_parameters) {
  if (points.size() < free_parameters) {
    throw Error(fmt::format("architecture \"{}\": {} points cannot determine {} free parameters", points[0].arch,
                            points.size(), free_parameters));
  }
}

void check_identifiable(const std::vector<LossPoint>& points) {
  if (distinct_count(points, &LossPoint::F) < 2) {
    throw Error(fmt::format("architecture \"{}\": every point has the same F, so the exponent a cannot be fitted",
                            points[0].arch));
  }
  if (distinct_count(points, &LossPoint::D) < 2) {
    throw Error(fmt::format("architecture \"{}\": every point has the same D, so the exponent c cannot be fitted",
                            points[0].arch));
  }
}

/// Data the law cannot describe gets a diagnosis instead of coefficients: losses that are all
/// equal, or that do not fall as compute C = F·D grows (least-squares slope of log L on log C,
/// which the law makes negative for any a, c > 0).
void check_loss_trend(const std::vector<LossPoint>& points) {
  double lo = points[0].loss, hi = points[0].loss;
  for (const auto& p : points) lo = std::min(lo, p.loss), hi = std::max(hi, p.loss);
  if (hi - lo <= 1e-12 * hi) {
    throw Error(fmt::format("architecture \"{}\": all losses equal ({:g}), so the law's power-law terms cannot be "
                            "fitted; check the loss column",
                            points[0].arch, lo));
  }
  double mean_x = 0.0, mean_y = 0.0;
  for (const auto& p : points) mean_x += std::log(p.F) + std::log(p.D), mean_y += std::log(p.loss);
  const double n = static_cast<double>(points.size());
  mean_x /= n;
  mean_y /= n;
  double sxy = 0.0, sxx = 0.0;
  for (const auto& p : points) {
    const double dx = std::log(p.F) + std::log(p.D) - mean_x;
    sxy += dx * (std::log(p.loss) - mean_y);
    sxx += dx * dx;
  }
  if (sxx > 0.0 && !(sxy < 0.0)) {
    throw Error(fmt::format("architecture \"{}\": the loss does not decrease with compute F·D (the least-squares "
                            "slope of log L on log(F·D) is {:+.3g}); the law L = E + A·F^(−a) + K·D^(−c) needs losses "
                            "that fall as F and D grow; check the loss column",
                            points[0].arch, sxy / sxx));
  }
}

/// The fit's own verdict on what it found: finite coefficients and residuals the law explains.
void check_fit_result(const std::vector<LossPoint>& points, const FitResult& result) {
  const auto& k = result.coefficients;
  for (double v : {k.E, k.A, k.K, k.a, k.b, k.c, result.summary.rmse, result.summary.objective}) {
    if (!std::isfinite(v)) {
      throw Error(fmt::format("architecture \"{}\": the fit produced a non-finite value; the data cannot be "
                              "described by the law",
                              points[0].arch));
    }
  }
  // A residual RMS of 25% in log-loss means the law does not describe the data at all.
  constexpr double max_rmse = 0.25;
  if (result.summary.rmse > max_rmse) {
    throw Error(fmt::format("architecture \"{}\": the fitted law misses the losses by {:.3g}% (RMS of log L_obs − "
                            "log L_pred, limit {:g}%): the data do not follow L = E + A·F^(−a) + K·D^(−c)",
                            points[0].arch, 100.0 * result.summary.rmse, 100.0 * max_rmse));
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public entry points

FitResult fit_scaling_law(const std::vector<LossPoint>& points, const FitOptions& options) {
  check_options(options);
  check_single_group(points);
  check_identifiable(points);
  check_loss_trend(points);
  const bool b_fixed = distinct_count(points, &LossPoint::S) == 1;

  std::vector<int> free{detail::theta_log_E, detail::theta_alpha, detail::theta_kappa, detail::theta_a,
                        detail::theta_c};
  if (!b_fixed) free.push_back(detail::theta_b);
  check_enough_points(points, free.size());

  const CentredData data(points);
  Theta held{};
  held[detail::theta_b] = options.fixed_b;
  std::vector<Theta> starts;
  for (const auto& k : options.extra_starts) starts.push_back(detail::to_theta(k, data));
  if (options.use_grid) {
    const auto grid = grid_starts(data, options.grid);
    starts.insert(starts.end(), grid.begin(), grid.end());
  }
  FitResult result = search(points, data, free, held, starts, options);
  check_fit_result(points, result);
  result.summary.min_compute = std::numeric_limits<double>::infinity();
  for (const auto& p : points) {
    result.summary.min_compute = std::min(result.summary.min_compute, p.F * p.D);
    result.summary.max_compute = std::max(result.summary.max_compute, p.F * p.D);
  }
  result.summary.b_fixed = b_fixed;
  result.summary.fixed_b_value = b_fixed ? options.fixed_b : 0.0;
  return result;
}

FitResult fit_intercepts(const std::vector<LossPoint>& points, const ScalingCoefficients& exponents,
                         const FitOptions& options) {
  check_options(options);
  check_single_group(points);
  const std::vector<int> free{detail::theta_log_E, detail::theta_alpha, detail::theta_kappa};
  check_enough_points(points, free.size());

  const CentredData data(points);
  const Theta held = detail::to_theta(exponents, data);
  // The given intercepts first (for a domain: the overall fit's), then any extra starts, then
  // the data-adaptive intercepts for each e_fraction of the grid.
  std::vector<Theta> starts{held};
  for (const auto& k : options.extra_starts) starts.push_back(detail::to_theta(k, data));
  if (options.use_grid) {
    for (double e_fraction : options.grid.e_fraction) {
      Theta t = held;
      set_start_intercepts(t, data, e_fraction);
      starts.push_back(t);
    }
  }
  FitResult result = search(points, data, free, held, starts, options);
  result.summary.exponents_fixed = true;
  return result;
}

std::vector<DomainLaw> fit_domain_laws(const std::vector<LossPoint>& points, const ScalingCoefficients& overall,
                                       const FitOptions& options) {
  std::vector<DomainLaw> laws;
  for (const auto& name : domains(points)) {
    laws.push_back({name, fit_intercepts(points_of_domain(points, name), overall, options)});
  }
  return laws;
}

ArchLaw fit_arch_law(const std::vector<LossPoint>& points, const FitOptions& options) {
  if (points.empty()) throw Error("there are no points to fit");
  const std::vector<LossPoint> overall = points_of_domain(points, "");
  if (overall.empty()) {
    throw Error(fmt::format("architecture \"{}\" has no overall rows (rows with an empty domain); the "
                            "per-domain fits share the exponents of the overall fit",
                            points.front().arch));
  }
  ArchLaw law;
  law.arch = points.front().arch;
  law.overall = fit_scaling_law(overall, options);
  law.domains = fit_domain_laws(points, law.overall.coefficients, options);
  return law;
}

}  // namespace budget
