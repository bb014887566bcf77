#include "budget/scaling_plan.hpp"

#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "budget/error.hpp"

namespace budget {
namespace {

void check_budget(double C, double S) {
  if (!(C > 0.0) || !std::isfinite(C)) {
    throw Error(fmt::format("budget C = {} is not allowed; allowed: a finite number > 0 (FLOPs)", C));
  }
  if (!(S >= 0.0 && S < 1.0)) throw Error(fmt::format("sparsity S = {} is not allowed; allowed: [0, 1)", S));
}

/// log A' = log A + b·log(1 − S).
double log_effective_A(const ScalingCoefficients& k, double S) { return std::log(k.A) + k.b * std::log1p(-S); }

/// log P(S) = log(a+c) + c/(a+c)·(log A' − log c) + a/(a+c)·(log K − log a).
double log_prefactor(const ScalingCoefficients& k, double S) {
  const double sum = k.a + k.c;
  return std::log(sum) + k.c / sum * (log_effective_A(k, S) - std::log(k.c)) +
         k.a / sum * (std::log(k.K) - std::log(k.a));
}

/// Brent's method (zeroin) for g on [lo, hi] with g(lo), g(hi) of opposite signs, to the
/// double-precision limit in the argument.
template <typename Function>
double brent_root(Function g, double lo, double hi) {
  double a = lo, b = hi, fa = g(a), fb = g(b);
  double c = a, fc = fa, d = b - a, e = d;
  constexpr double eps = std::numeric_limits<double>::epsilon();
  for (int iteration = 0; iteration < 300; ++iteration) {
    if ((fb > 0) == (fc > 0)) {  // keep the root between b and c
      c = a;
      fc = fa;
      d = e = b - a;
    }
    if (std::fabs(fc) < std::fabs(fb)) {  // b is the best estimate
      a = b; b = c; c = a;
      fa = fb; fb = fc; fc = fa;
    }
    const double tolerance = 2.0 * eps * std::fabs(b) + 1e-300;
    const double half = 0.5 * (c - b);
    if (std::fabs(half) <= tolerance || fb == 0.0) return b;
    if (std::fabs(e) >= tolerance && std::fabs(fa) > std::fabs(fb)) {
      // Inverse quadratic interpolation (secant when only two points differ).
      double p, q;
      const double s = fb / fa;
      if (a == c) {
        p = 2.0 * half * s;
        q = 1.0 - s;
      } else {
        const double r = fb / fc, t = fa / fc;
        p = s * (2.0 * half * t * (t - r) - (b - a) * (r - 1.0));
        q = (t - 1.0) * (r - 1.0) * (s - 1.0);
      }
      if (p > 0) q = -q; else p = -p;
      if (2.0 * p < std::min(3.0 * half * q - std::fabs(tolerance * q), std::fabs(e * q))) {
        e = d;
        d = p / q;
      } else {
        d = e = half;  // bisection
      }
    } else {
      d = e = half;
    }
    a = b;
    fa = fb;
    b += std::fabs(d) > tolerance ? d : (half > 0 ? tolerance : -tolerance);
    fb = g(b);
  }
  return b;
}

}  // namespace

double frontier_exponent(const ScalingCoefficients& k) { return k.a * k.c / (k.a + k.c); }

double frontier_prefactor(const ScalingCoefficients& k, double S) {
  check_budget(1.0, S);
  return std::exp(log_prefactor(k, S));
}

double frontier_loss(const ScalingCoefficients& k, double C, double S) {
  check_budget(C, S);
  return k.E + std::exp(log_prefactor(k, S) - frontier_exponent(k) * std::log(C));
}

FrontierPoint compute_optimal(const ScalingCoefficients& k, double C, double S) {
  check_budget(C, S);
  validate_coefficients(k, "coefficients");
  // dL/dF = 0 at fixed C = F·D:  a·A'·F^(−a) = c·K·D^(−c)  ⇒  F^(a+c) = a·A'·C^c / (c·K).
  const double log_F = (std::log(k.a) + log_effective_A(k, S) + k.c * std::log(C) - std::log(k.c) - std::log(k.K)) /
                       (k.a + k.c);
  FrontierPoint point;
  point.C = C;
  point.S = S;
  point.F = std::exp(log_F);
  point.D = std::exp(std::log(C) - log_F);
  point.loss = frontier_loss(k, C, S);
  point.tokens_per_parameter = 6.0 * point.D / point.F;
  return point;
}

double compute_to_reach(const ScalingCoefficients& k, double loss, double S) {
  check_budget(1.0, S);
  validate_coefficients(k, "coefficients");
  if (!std::isfinite(loss) || !(loss > k.E)) {
    throw Error(fmt::format("the frontier never reaches loss {:.6g}: its asymptote E = {:.6g} is not below it",
                            loss, k.E));
  }
  // g(t) = L*(e^t) − loss is continuous and strictly decreasing in t = log C.
  const double log_P = log_prefactor(k, S);
  const double gamma = frontier_exponent(k);
  const auto g = [&](double t) { return k.E + std::exp(log_P - gamma * t) - loss; };
  // Bracket by geometric expansion around C = 1e20, within the range of a double.
  const double t_max = std::log(std::numeric_limits<double>::max());
  double lo = std::log(1e20), hi = lo, step = 1.0;
  while (g(lo) <= 0.0 && lo > -t_max) lo = std::max(lo - (step *= 2.0), -t_max);
  step = 1.0;
  while (g(hi) > 0.0 && hi < t_max) hi = std::min(hi + (step *= 2.0), t_max);
  if (g(lo) <= 0.0 || g(hi) > 0.0) {
    throw Error(fmt::format("the budget that reaches loss {:.6g} is outside the range of a double "
                            "(asymptote E = {:.6g})",
                            loss, k.E));
  }
  return std::exp(brent_root(g, lo, hi));
}

Gain ce_gain(const ScalingCoefficients& target, const ScalingCoefficients& reference, double C, double S) {
  Gain gain;
  gain.C_target = C;
  gain.loss = frontier_loss(target, C, S);
  if (!(gain.loss > reference.E)) {
    throw Error(fmt::format("the reference frontier never reaches the target's loss {:.6g} (C = {:g}, S = {:g}): "
                            "the reference's asymptote E = {:.6g} is not below it",
                            gain.loss, C, S, reference.E));
  }
  gain.C_reference = compute_to_reach(reference, gain.loss, S);
  gain.gain = 1.0 - C / gain.C_reference;
  return gain;
}

}  // namespace budget
