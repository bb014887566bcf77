#pragma once
// Private: the fit's minimiser (docs/scaling.md, "Optimiser"), for small box-constrained problems
// (n ≤ 6 variables) whose Hessian is cheap.
//
// Each step moves along Newton's direction, −(∇²f)⁻¹∇f on the variables not held at a bound (a
// Cholesky factor of the exact Hessian), where ∇²f is positive definite there; elsewhere along
// L-BFGS's (Nocedal & Wright, "Numerical Optimization", 2nd ed., Algorithm 7.4, the two-loop
// recursion, H₀ = γI with γ = sᵀy / yᵀy of eq. 7.20; 8 pairs, a pair kept only when sᵀy > 0; the
// steepest descent when no pair is kept). A line search finds a step meeting the strong Wolfe
// conditions (Algorithms 3.5 and 3.6, c₁ = 10⁻⁴, c₂ = 0.9, cubic interpolation in the zoom), trying
// the whole step first, or reaches the first bound in the way with sufficient decrease. A variable
// is held at a bound while its gradient points out of the box. Every vector is a fixed-size array:
// nothing is allocated per iteration.
//
// Stopping rules (NLopt's, which the fit used before issue 35): a step whose objective change is at
// most ftol_rel·(|f| + |f_new|)/2, or whose first trial changes f by no more (function_tolerance);
// a step that moves every variable by at most xtol_rel·|x_new| (parameter_tolerance); a gradient
// exactly zero on the free variables (stationary); no step that decreases f along Newton's,
// L-BFGS's and then the steepest descent's direction (roundoff_limited); max_evaluations
// evaluations of f and ∇f (the best point seen is returned). Hessians are counted apart.

#include <array>

namespace budget::detail {

constexpr int minimizer_max_variables = 6;
using MinimizerVector = std::array<double, minimizer_max_variables>;
/// n×n, row-major in the first n·n entries.
using MinimizerMatrix = std::array<double, minimizer_max_variables * minimizer_max_variables>;

/// A function of n ≤ 6 variables with its gradient and, near the optimum, its Hessian.
class MinimizerFunction {
 public:
  virtual ~MinimizerFunction() = default;
  /// f(x); ∇f(x) into `gradient` when it is not null.
  virtual double value(const MinimizerVector& x, MinimizerVector* gradient) = 0;
  /// ∇²f(x) (cheapest right after value() at the same x, whose work it may reuse).
  virtual void hessian(const MinimizerVector& x, MinimizerMatrix& hessian) = 0;
};

enum class MinimizerStop { stationary, function_tolerance, parameter_tolerance, roundoff_limited, max_evaluations };

struct MinimizerSettings {
  int n = 0;  ///< 1 ≤ n ≤ minimizer_max_variables
  MinimizerVector lower{}, upper{};
  double ftol_rel = 1e-12;
  double xtol_rel = 1e-12;
  int max_evaluations = 5000;
};

struct MinimizerOutcome {
  MinimizerVector x{};
  double f = 0.0;
  MinimizerStop stop = MinimizerStop::roundoff_limited;
  int evaluations = 0;  ///< of f and ∇f
  int hessians = 0;     ///< of ∇²f
};

/// Minimises `function` over the box [lower, upper] from `start` (clipped into the box).
MinimizerOutcome minimize_bounded(MinimizerFunction& function, const MinimizerVector& start,
                                  const MinimizerSettings& settings);

}  // namespace budget::detail
