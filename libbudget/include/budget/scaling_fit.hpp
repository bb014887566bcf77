#pragma once
/// \file
/// Fitting L(F, S, D) = E + A·(1 − S)^b·F^(−a) + K·D^(−c) to measured losses (docs/scaling.md).
///
/// The fit minimises the SUM over points of Huber_δ(log L_obs − log L_pred), with
///
///     log L_pred = logsumexp(log E,  log A + b·log(1 − S) − a·log F,  log K − c·log D),
///
/// by Newton steps with the exact Hessian and bounded L-BFGS (FitMinimizer; NLopt's LD_LBFGS before
/// issue 35) with an analytic gradient, from every start of a multistart grid, keeping the lowest
/// objective. Each architecture is fitted on its own.
///
/// Thread safety: fit_scaling_law(), fit_intercepts(), fit_arch_law() and fit_domain_laws() are
/// reentrant (each fit owns its optimiser state): concurrent calls are safe.

#include <cstddef>
#include <string>
#include <vector>

#include "budget/scaling_data.hpp"
#include "budget/scaling_law.hpp"

namespace budget {

/// Starting points of the multistart search. Every combination of the four lists is one start.
/// Starts are data-adaptive so that one grid serves any units of F and D: E₀ = e_fraction × the
/// smallest observed loss, and A₀, K₀ are set so that, at the geometric centre of the data
/// (mean log F, log D, log(1 − S)), each of the two power-law terms equals half of the
/// geometric-mean loss minus E₀. (Hoffmann et al. grid the log-coefficients instead; with
/// data-adaptive intercepts a much smaller grid reaches the same optimum, see docs/scaling.md.)
struct MultistartGrid {
  std::vector<double> a{0.2, 0.5, 1.0};
  std::vector<double> b{0.3};
  std::vector<double> c{0.2, 0.5, 1.0};
  std::vector<double> e_fraction{0.5, 0.9};
};

/// Box constraints of the search (docs/scaling.md, "Bounds"). The intercept bounds apply to the
/// centred intercepts, i.e. the log of each power-law term at the geometric centre of the data.
struct FitBounds {
  double exponent_min = 0.0;  ///< a, b and c
  double exponent_max = 3.0;
  double log_E_min = -20.0;   ///< E ≥ 2e-9: "no irreducible loss" is reachable
  double log_E_max = 10.0;
  double log_term_min = -50.0;  ///< log of A·(1−S)^b·F^(−a) or K·D^(−c) at the data's centre
  double log_term_max = 50.0;
};

/// The minimiser each start runs (docs/scaling.md, "Optimiser"). Both minimise the same objective
/// over the same bounds from the same starts under the same relative tolerances.
enum class FitMinimizer {
  /// Newton steps with the exact Hessian where it is positive definite, L-BFGS elsewhere, a
  /// strong-Wolfe line search (the default since issue 35: about 0.55 of the evaluations).
  newton,
  /// NLopt's LD_LBFGS (Luksan's limited-memory variable metric with bounds), the minimiser before
  /// issue 35: the reference the tests and bench/bench_scaling compare against.
  nlopt_lbfgs
};

/// Options of a fit, validated up front (Ceres' Options::IsValid).
struct FitOptions {
  double huber_delta = 1e-3;  ///< δ of the Huber loss on log-loss residuals, in [min_huber_delta, max_huber_delta]
  static constexpr double min_huber_delta = 1e-6;
  static constexpr double max_huber_delta = 10.0;
  MultistartGrid grid;
  bool use_grid = true;       ///< false: only `extra_starts` (at least one then)
  /// Starting points tried before the grid (a warm start, for example). Values outside the
  /// bounds are clipped to them; E = 0 starts at log_E_min.
  std::vector<ScalingCoefficients> extra_starts;
  FitBounds bounds;
  /// The value b is held at when it is not identifiable (every point has the same S).
  double fixed_b = 0.0;
  FitMinimizer minimizer = FitMinimizer::newton;
  double ftol_rel = 1e-12;     ///< relative tolerance on the objective (NLopt's ftol_rel)
  double xtol_rel = 1e-12;     ///< relative tolerance on the parameters (NLopt's xtol_rel)
  int max_evaluations = 5000;  ///< per start
  /// A start "reached the best" when its objective is within this relative tolerance of the
  /// lowest (or within 1e-18 × points absolutely: a residual RMS of about 1e-9, numerically zero).
  double same_objective_rel = 1e-9;
  /// Threads the starts run on (0: every hardware thread). Each start is independent and the best
  /// is chosen in start order, so the result is the same bit for bit on any count. 1 (the default)
  /// inside work that is parallel already (the bootstrap's refits); the CLI's `fit` uses 0.
  unsigned threads = 1;

  /// Empty when the options are usable, else a message naming the bad field and what is allowed.
  std::string validation_error() const;
};

/// Why the search of the best start stopped (NLopt's result codes; the Newton minimiser stops by the
/// same rules).
enum class FitTermination {
  function_tolerance,   ///< ftol_rel reached: converged
  parameter_tolerance,  ///< xtol_rel reached: converged
  success,              ///< NLopt's generic success; for the Newton minimiser, a gradient exactly zero
  roundoff_limited,     ///< the line search could not progress further; the point is usually usable
  max_evaluations,      ///< stopped by max_evaluations: not converged
  failure               ///< NLopt reported a failure
};

/// "ftol_rel reached", "xtol_rel reached", ...
std::string to_string(FitTermination termination);

/// What a fit did (Ceres' Solver::Summary).
struct FitSummary {
  FitTermination termination = FitTermination::failure;  ///< of the best start
  int evaluations = 0;        ///< objective+gradient evaluations of the best start (Hessians not counted)
  int total_evaluations = 0;  ///< over all starts
  int starts = 0;
  int starts_at_best = 0;     ///< starts whose objective matched the best (see FitOptions)
  double objective = 0.0;     ///< Σ Huber_δ(residual) at the optimum
  double rmse = 0.0;          ///< root-mean-square of log L_obs − log L_pred (≈ relative error)
  double huber_delta = 0.0;
  std::size_t points = 0;
  bool b_fixed = false;       ///< b was held at `fixed_b_value` (every point had the same S)
  double fixed_b_value = 0.0;
  bool exponents_fixed = false;  ///< an intercept-only fit (per-domain): a, b, c were given
  /// Smallest and largest training compute C = F·D of the fitted points (0 when not recorded):
  /// frontier and ce-gain flag budgets far outside this range as extrapolations.
  double min_compute = 0.0;
  double max_compute = 0.0;

  /// True unless the best start hit max_evaluations or failed.
  bool usable() const;
  /// One line: "converged (ftol_rel reached) after 73 evaluations; objective 3.1e-05, RMSE 0.21%,
  /// 18/18 starts reached the best; 72 points".
  std::string brief() const;
  /// Several lines, every field.
  std::string full_report() const;
};

struct FitResult {
  ScalingCoefficients coefficients;
  FitSummary summary;
};

/// Fits the law to `points`, which must all share one architecture and one domain. Throws
/// budget::Error for invalid options, fewer points than free parameters, or data that cannot
/// identify the exponents (fewer than two distinct F or D values). When every point has the same
/// S, b is held at options.fixed_b and the summary says so.
FitResult fit_scaling_law(const std::vector<LossPoint>& points, const FitOptions& options = {});

/// Refits only E, A and K on `points`, with a, b and c held at those of `exponents`. This is the
/// per-domain fit of the paper: exponents shared from the overall fit, intercepts per subset.
FitResult fit_intercepts(const std::vector<LossPoint>& points, const ScalingCoefficients& exponents,
                         const FitOptions& options = {});

/// The intercept-only fit of one domain.
struct DomainLaw {
  std::string domain;
  FitResult fit;
};

/// The laws of one architecture: the overall fit and one intercept-only fit per domain.
struct ArchLaw {
  std::string arch;
  FitResult overall;
  std::vector<DomainLaw> domains;
};

/// Fits an architecture: the overall law on its rows with an empty domain, then, for every
/// domain in `points` (in order of appearance), the intercepts with the overall exponents.
/// All points must share one architecture.
ArchLaw fit_arch_law(const std::vector<LossPoint>& points, const FitOptions& options = {});

/// Per-domain intercept fits of `points` (rows with a non-empty domain, one architecture), with
/// the exponents of `overall`. Used with coefficients read from a file.
std::vector<DomainLaw> fit_domain_laws(const std::vector<LossPoint>& points,
                                       const ScalingCoefficients& overall,
                                       const FitOptions& options = {});

}  // namespace budget
