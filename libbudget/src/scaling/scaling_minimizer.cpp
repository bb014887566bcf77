// The fit's minimiser: Newton steps with the exact Hessian where it is positive definite, bounded
// L-BFGS elsewhere, a strong-Wolfe line search (scaling_minimizer.hpp; docs/scaling.md, "Optimiser").
#include "scaling/scaling_minimizer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace budget::detail {
namespace {

constexpr int lbfgs_pairs = 8;     // the (s, y) pairs kept; n ≤ 6 variables
constexpr double wolfe_c1 = 1e-4;  // sufficient decrease (N&W, eq. 3.6a)
constexpr double wolfe_c2 = 0.9;   // curvature, the usual value for quasi-Newton directions (N&W, p. 34)
constexpr int max_line_search_steps = 20;

using Vec = MinimizerVector;
using Free = std::array<bool, minimizer_max_variables>;

double dot(const Vec& a, const Vec& b, int n) {
  double s = 0.0;
  for (int i = 0; i < n; ++i) s += a[static_cast<std::size_t>(i)] * b[static_cast<std::size_t>(i)];
  return s;
}

/// A point with its value and gradient; `t` is its step along the current line search direction.
struct Point {
  Vec x{};
  double f = 0.0;
  Vec g{};
  double t = 0.0;
  double slope = 0.0;  // gᵀd along the current direction
};

/// The minimiser of the cubic through (a, fa, da) and (b, fb, db) (N&W eq. 3.59), or NaN.
double cubic_minimum(double a, double fa, double da, double b, double fb, double db) {
  const double d1 = da + db - 3.0 * (fa - fb) / (a - b);
  const double radicand = d1 * d1 - da * db;
  if (!(radicand >= 0.0)) return std::numeric_limits<double>::quiet_NaN();
  const double d2 = std::copysign(std::sqrt(radicand), b - a);
  return b - (b - a) * (db + d2 - d1) / (db - da + 2.0 * d2);
}

struct Direction {
  Vec d{};
  bool newton = false;    // Newton's, else L-BFGS's
  bool steepest = false;  // L-BFGS without pairs: the steepest descent on the free variables
};

/// accepted: `out` is the new point; flat: the first trial changed f by at most ftol_rel (`out` is the
/// better of the two: the search has converged); no_progress: no step decreased f.
enum class Search { accepted, flat, no_progress, out_of_evaluations };

class BoundedMinimizer {
 public:
  BoundedMinimizer(MinimizerFunction& function, const MinimizerSettings& settings)
      : function_(function), s_(settings), n_(settings.n) {}

  MinimizerOutcome run(const Vec& start);

 private:
  bool evaluate(const Vec& x, Point& out);
  Free free_set(const Point& p) const;
  Vec lbfgs_direction(const Point& p, const Free& free) const;
  void keep_inside(const Vec& x, Vec& d) const;
  double max_step(const Vec& x, const Vec& d) const;
  Vec step_to(const Vec& x, const Vec& d, double t, double t_max) const;
  Search line_search(const Point& at, const Vec& d, double t_init, double t_max, Point& out);
  Search zoom(const Point& at, const Vec& d, double t_max, Point lo, Point hi, Point& out);
  bool newton_direction_at(const Point& at, const Free& free, Vec& d);
  Direction direction(const Point& x, const Free& free, bool try_newton);
  void remember(const Point& from, const Point& to);
  bool converged(const Point& from, const Point& to, MinimizerStop& stop) const;
  MinimizerOutcome outcome(const Point& at, MinimizerStop stop) const;

  MinimizerFunction& function_;
  MinimizerSettings s_;
  int n_;
  int evaluations_ = 0;
  int hessians_ = 0;
  Point best_;
  bool has_best_ = false;
  std::array<Vec, lbfgs_pairs> s_pairs_{}, y_pairs_{};
  std::array<double, lbfgs_pairs> rho_{};
  int stored_ = 0, newest_ = -1;
};

/// One evaluation, counted; false (and none made) once max_evaluations are spent.
bool BoundedMinimizer::evaluate(const Vec& x, Point& out) {
  if (evaluations_ >= s_.max_evaluations) return false;
  ++evaluations_;
  out.x = x;
  out.g = {};
  out.f = function_.value(x, &out.g);
  if (!has_best_ || out.f < best_.f) best_ = out, has_best_ = true;
  return true;
}

/// The variables not held at a bound by a gradient pointing out of the box.
Free BoundedMinimizer::free_set(const Point& p) const {
  Free free{};
  for (int i = 0; i < n_; ++i) {
    const auto k = static_cast<std::size_t>(i);
    free[k] = !((p.x[k] <= s_.lower[k] && p.g[k] >= 0.0) || (p.x[k] >= s_.upper[k] && p.g[k] <= 0.0));
  }
  return free;
}

/// −H·g on the free variables by the two-loop recursion (N&W Algorithm 7.4), H₀ = γI.
Vec BoundedMinimizer::lbfgs_direction(const Point& p, const Free& free) const {
  Vec q{};
  for (int i = 0; i < n_; ++i) q[static_cast<std::size_t>(i)] = free[static_cast<std::size_t>(i)] ? p.g[static_cast<std::size_t>(i)] : 0.0;
  std::array<double, lbfgs_pairs> alpha{};
  for (int j = 0; j < stored_; ++j) {
    const auto k = static_cast<std::size_t>((newest_ - j + lbfgs_pairs) % lbfgs_pairs);
    alpha[k] = rho_[k] * dot(s_pairs_[k], q, n_);
    for (int i = 0; i < n_; ++i) q[static_cast<std::size_t>(i)] -= alpha[k] * y_pairs_[k][static_cast<std::size_t>(i)];
  }
  if (stored_ > 0) {
    const auto k = static_cast<std::size_t>(newest_);
    const double gamma = dot(s_pairs_[k], y_pairs_[k], n_) / dot(y_pairs_[k], y_pairs_[k], n_);
    for (int i = 0; i < n_; ++i) q[static_cast<std::size_t>(i)] *= gamma;
  }
  for (int j = stored_ - 1; j >= 0; --j) {
    const auto k = static_cast<std::size_t>((newest_ - j + lbfgs_pairs) % lbfgs_pairs);
    const double beta = rho_[k] * dot(y_pairs_[k], q, n_);
    for (int i = 0; i < n_; ++i) q[static_cast<std::size_t>(i)] += (alpha[k] - beta) * s_pairs_[k][static_cast<std::size_t>(i)];
  }
  Vec d{};
  for (int i = 0; i < n_; ++i) d[static_cast<std::size_t>(i)] = free[static_cast<std::size_t>(i)] ? -q[static_cast<std::size_t>(i)] : 0.0;
  return d;
}

/// Zeroes the components of `d` that would leave the box from a bound x lies on.
void BoundedMinimizer::keep_inside(const Vec& x, Vec& d) const {
  for (int i = 0; i < n_; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if ((x[k] <= s_.lower[k] && d[k] < 0.0) || (x[k] >= s_.upper[k] && d[k] > 0.0)) d[k] = 0.0;
  }
}

/// The largest t with x + t·d in the box (+∞ when no bound is in the way).
double BoundedMinimizer::max_step(const Vec& x, const Vec& d) const {
  double t = std::numeric_limits<double>::infinity();
  for (int i = 0; i < n_; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (d[k] < 0.0) t = std::min(t, (s_.lower[k] - x[k]) / d[k]);
    if (d[k] > 0.0) t = std::min(t, (s_.upper[k] - x[k]) / d[k]);
  }
  return t;
}

/// x + t·d clipped into the box (rounding may leave it by an ulp; at t_max a bound is reached).
Vec BoundedMinimizer::step_to(const Vec& x, const Vec& d, double t, double t_max) const {
  Vec y = x;
  for (int i = 0; i < n_; ++i) {
    const auto k = static_cast<std::size_t>(i);
    y[k] = std::clamp(x[k] + t * d[k], s_.lower[k], s_.upper[k]);
    if (t >= t_max) {
      if (d[k] < 0.0 && (s_.lower[k] - x[k]) / d[k] <= t_max) y[k] = s_.lower[k];
      if (d[k] > 0.0 && (s_.upper[k] - x[k]) / d[k] <= t_max) y[k] = s_.upper[k];
    }
  }
  return y;
}

/// A step along d satisfying the strong Wolfe conditions, or reaching t_max with sufficient
/// decrease (N&W Algorithm 3.5; the trial step grows fourfold while the slope stays steep).
Search BoundedMinimizer::line_search(const Point& at, const Vec& d, double t_init, double t_max, Point& out) {
  Point prev = at;
  prev.t = 0.0;
  prev.slope = dot(at.g, d, n_);
  const double slope0 = prev.slope;
  double t = t_init;
  for (int step = 0; step < max_line_search_steps; ++step) {
    Point p;
    if (!evaluate(step_to(at.x, d, t, t_max), p)) return Search::out_of_evaluations;
    p.t = t;
    p.slope = dot(p.g, d, n_);
    if (step == 0 && std::fabs(p.f - at.f) <= s_.ftol_rel * 0.5 * (std::fabs(p.f) + std::fabs(at.f))) {
      out = p.f < at.f ? p : at;
      return Search::flat;
    }
    if (!(p.f <= at.f + wolfe_c1 * t * slope0) || (step > 0 && p.f >= prev.f)) return zoom(at, d, t_max, prev, p, out);
    if (std::fabs(p.slope) <= -wolfe_c2 * slope0) {
      out = p;
      return Search::accepted;
    }
    if (p.slope >= 0.0) return zoom(at, d, t_max, p, prev, out);
    if (t >= t_max) {
      out = p;
      return Search::accepted;
    }
    prev = p;
    t = std::min(t_max, 4.0 * t);
  }
  out = prev;
  return prev.t > 0.0 ? Search::accepted : Search::no_progress;
}

/// N&W Algorithm 3.6: lo satisfies sufficient decrease with the lowest f so far, the interval
/// between lo and hi holds a point of the strong Wolfe conditions.
Search BoundedMinimizer::zoom(const Point& at, const Vec& d, double t_max, Point lo, Point hi, Point& out) {
  const double slope0 = dot(at.g, d, n_);
  for (int step = 0; step < max_line_search_steps; ++step) {
    const double a = std::min(lo.t, hi.t), b = std::max(lo.t, hi.t), width = b - a;
    if (!(width > 4.0 * std::numeric_limits<double>::epsilon() * b)) break;
    double t = cubic_minimum(lo.t, lo.f, lo.slope, hi.t, hi.f, hi.slope);
    if (!(t >= a + 0.1 * width && t <= b - 0.1 * width)) t = 0.5 * (lo.t + hi.t);
    Point p;
    if (!evaluate(step_to(at.x, d, t, t_max), p)) return Search::out_of_evaluations;
    p.t = t;
    p.slope = dot(p.g, d, n_);
    if (!(p.f <= at.f + wolfe_c1 * t * slope0) || p.f >= lo.f) {
      hi = p;
      continue;
    }
    if (std::fabs(p.slope) <= -wolfe_c2 * slope0) {
      out = p;
      return Search::accepted;
    }
    if (p.slope * (hi.t - lo.t) >= 0.0) hi = lo;
    lo = p;
  }
  if (!(lo.t > 0.0)) return Search::no_progress;
  out = lo;
  return Search::accepted;
}

/// Solves H·p = −g on the free variables by Cholesky; false when H is not positive definite there.
bool newton_direction(const MinimizerMatrix& hessian, const Vec& gradient, const Free& free, int n, Vec& p) {
  std::array<int, minimizer_max_variables> index{};
  int m = 0;
  for (int i = 0; i < n; ++i) {
    if (free[static_cast<std::size_t>(i)]) index[static_cast<std::size_t>(m++)] = i;
  }
  MinimizerMatrix l{};  // the Cholesky factor, m×m row-major
  const auto h = [&](int i, int j) {
    return hessian[static_cast<std::size_t>(index[static_cast<std::size_t>(i)] * n + index[static_cast<std::size_t>(j)])];
  };
  const auto at = [&](int i, int j) -> double& { return l[static_cast<std::size_t>(i * m + j)]; };
  for (int j = 0; j < m; ++j) {
    double diagonal = h(j, j);
    for (int k = 0; k < j; ++k) diagonal -= at(j, k) * at(j, k);
    if (!(diagonal > 0.0)) return false;
    at(j, j) = std::sqrt(diagonal);
    for (int i = j + 1; i < m; ++i) {
      double v = h(i, j);
      for (int k = 0; k < j; ++k) v -= at(i, k) * at(j, k);
      at(i, j) = v / at(j, j);
    }
  }
  Vec z{};
  for (int i = 0; i < m; ++i) {  // L·z = −g
    double v = -gradient[static_cast<std::size_t>(index[static_cast<std::size_t>(i)])];
    for (int k = 0; k < i; ++k) v -= at(i, k) * z[static_cast<std::size_t>(k)];
    z[static_cast<std::size_t>(i)] = v / at(i, i);
  }
  p = {};
  for (int i = m - 1; i >= 0; --i) {  // Lᵀ·p = z
    double v = z[static_cast<std::size_t>(i)];
    for (int k = i + 1; k < m; ++k) v -= at(k, i) * p[static_cast<std::size_t>(index[static_cast<std::size_t>(k)])];
    p[static_cast<std::size_t>(index[static_cast<std::size_t>(i)])] = v / at(i, i);
  }
  for (double v : p) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

/// The Newton direction at `at` on its free variables, or false when ∇²f is not positive definite
/// there (or the direction is no descent once kept inside the box).
bool BoundedMinimizer::newton_direction_at(const Point& at, const Free& free, Vec& d) {
  MinimizerMatrix hessian;
  function_.hessian(at.x, hessian);
  ++hessians_;
  if (!newton_direction(hessian, at.g, free, n_, d)) return false;
  keep_inside(at.x, d);
  return dot(at.g, d, n_) < 0.0;
}

/// Keeps the pair (s, y) of a step when its curvature sᵀy is positive.
void BoundedMinimizer::remember(const Point& from, const Point& to) {
  Vec s{}, y{};
  for (int i = 0; i < n_; ++i) {
    const auto k = static_cast<std::size_t>(i);
    s[k] = to.x[k] - from.x[k];
    y[k] = to.g[k] - from.g[k];
  }
  const double sy = dot(s, y, n_);
  if (!(sy > std::numeric_limits<double>::epsilon() * dot(y, y, n_))) return;
  newest_ = (newest_ + 1) % lbfgs_pairs;
  const auto k = static_cast<std::size_t>(newest_);
  s_pairs_[k] = s;
  y_pairs_[k] = y;
  rho_[k] = 1.0 / sy;
  stored_ = std::min(stored_ + 1, lbfgs_pairs);
}

/// NLopt's relative stopping rules on a step from `from` to `to`.
bool BoundedMinimizer::converged(const Point& from, const Point& to, MinimizerStop& stop) const {
  if (std::fabs(to.f - from.f) <= s_.ftol_rel * 0.5 * (std::fabs(to.f) + std::fabs(from.f))) {
    stop = MinimizerStop::function_tolerance;
    return true;
  }
  for (int i = 0; i < n_; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (std::fabs(to.x[k] - from.x[k]) > s_.xtol_rel * std::fabs(to.x[k])) return false;
  }
  stop = MinimizerStop::parameter_tolerance;
  return true;
}

MinimizerOutcome BoundedMinimizer::outcome(const Point& at, MinimizerStop stop) const {
  MinimizerOutcome out;
  const Point& reported = stop == MinimizerStop::max_evaluations && has_best_ ? best_ : at;
  out.x = reported.x;
  out.f = reported.f;
  out.stop = stop;
  out.evaluations = evaluations_;
  out.hessians = hessians_;
  return out;
}

/// The step's direction: Newton's where ∇²f is positive definite on the free variables (unless
/// `try_newton` is false), else L-BFGS's (the steepest descent when it has no pairs, or its direction
/// is no descent).
Direction BoundedMinimizer::direction(const Point& x, const Free& free, bool try_newton) {
  Direction out;
  out.newton = try_newton && newton_direction_at(x, free, out.d);
  if (out.newton) return out;
  out.d = lbfgs_direction(x, free);
  keep_inside(x.x, out.d);
  if (!(dot(x.g, out.d, n_) < 0.0)) {
    stored_ = 0;
    out.d = lbfgs_direction(x, free);
    keep_inside(x.x, out.d);
  }
  out.steepest = stored_ == 0;
  return out;
}

MinimizerOutcome BoundedMinimizer::run(const Vec& start) {
  Point x;
  Vec clipped = start;
  for (int i = 0; i < n_; ++i) {
    const auto k = static_cast<std::size_t>(i);
    clipped[k] = std::clamp(start[k], s_.lower[k], s_.upper[k]);
  }
  if (!evaluate(clipped, x)) return outcome(x, MinimizerStop::max_evaluations);
  bool newton = true;  // false for one step after a Newton step made no progress
  for (;;) {
    const Free free = free_set(x);
    bool stationary = true;
    for (int i = 0; i < n_; ++i) {
      const auto k = static_cast<std::size_t>(i);
      stationary = stationary && (!free[k] || x.g[k] == 0.0);
    }
    if (stationary) return outcome(x, MinimizerStop::stationary);
    const Direction step = direction(x, free, newton);
    const double t_max = max_step(x.x, step.d);
    // A quasi-Newton step is tried whole; the steepest descent moves by at most 1 in norm at first.
    const double t_init = step.steepest ? std::min(1.0, 1.0 / std::sqrt(dot(step.d, step.d, n_))) : 1.0;
    Point next;
    const Search found = line_search(x, step.d, std::min(t_init, t_max), t_max, next);
    if (found == Search::out_of_evaluations) return outcome(x, MinimizerStop::max_evaluations);
    if (found == Search::flat) return outcome(next, MinimizerStop::function_tolerance);
    if (found == Search::no_progress) {
      if (step.newton || stored_ > 0) {  // once more by L-BFGS, then along the steepest descent
        newton = false;
        if (!step.newton) stored_ = 0;
        continue;
      }
      return outcome(x, MinimizerStop::roundoff_limited);
    }
    newton = true;
    remember(x, next);
    MinimizerStop stop{};
    const bool done = converged(x, next, stop);
    x = next;
    if (done) return outcome(x, stop);
  }
}

}  // namespace

MinimizerOutcome minimize_bounded(MinimizerFunction& function, const MinimizerVector& start,
                                  const MinimizerSettings& settings) {
  return BoundedMinimizer(function, settings).run(start);
}

}  // namespace budget::detail
