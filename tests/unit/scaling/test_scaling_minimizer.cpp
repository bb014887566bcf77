// The fit's Newton minimiser (issue 35): on small problems with known minima, and on the fit's own
// data against the reference minimiser (NLopt's L-BFGS, the fit before issue 35): the same optimum
// or a lower one, with fewer evaluations. The objective's Hessian and its two forms of the
// log-sum-exp against independent references.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "budget/scaling_data.hpp"
#include "budget/scaling_fit.hpp"
#include "scaling/scaling_minimizer.hpp"
#include "scaling/scaling_objective.hpp"
#include "scaling/scaling_synthetic.hpp"
#include "scaling/scaling_test_support.hpp"

using namespace budget;
using namespace budget::detail;

namespace {

/// Rosenbrock's function (a = 1, b = 100): minimum 0 at (1, 1); its Hessian is indefinite away
/// from the valley, so the minimiser uses both of its directions.
class Rosenbrock final : public budget::detail::MinimizerFunction {
 public:
  double value(const MinimizerVector& p, MinimizerVector* g) override {
    const double x = p[0], y = p[1];
    if (g != nullptr) {
      (*g)[0] = -2.0 * (1.0 - x) - 400.0 * x * (y - x * x);
      (*g)[1] = 200.0 * (y - x * x);
    }
    return (1.0 - x) * (1.0 - x) + 100.0 * (y - x * x) * (y - x * x);
  }
  void hessian(const MinimizerVector& p, MinimizerMatrix& h) override {
    const double x = p[0], y = p[1];
    h[0] = 2.0 - 400.0 * (y - x * x) + 800.0 * x * x;
    h[1] = h[2] = -400.0 * x;
    h[3] = 200.0;
  }
};

/// f = Σ_i (i + 1)·(x_i − c_i)²: the box's nearest point to c is the minimum.
class Bowl final : public budget::detail::MinimizerFunction {
 public:
  explicit Bowl(MinimizerVector centre) : c_(centre) {}
  double value(const MinimizerVector& x, MinimizerVector* g) override {
    double f = 0.0;
    for (std::size_t i = 0; i < 3; ++i) {
      f += static_cast<double>(i + 1) * (x[i] - c_[i]) * (x[i] - c_[i]);
      if (g != nullptr) (*g)[i] = 2.0 * static_cast<double>(i + 1) * (x[i] - c_[i]);
    }
    return f;
  }
  void hessian(const MinimizerVector&, MinimizerMatrix& h) override {
    h = {};
    for (std::size_t i = 0; i < 3; ++i) h[i * 3 + i] = 2.0 * static_cast<double>(i + 1);
  }

 private:
  MinimizerVector c_;
};

MinimizerSettings box(int n, double lo, double hi) {
  MinimizerSettings s;
  s.n = n;
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) s.lower[i] = lo, s.upper[i] = hi;
  return s;
}

using test::max_relative_difference;

/// The fit with the Newton minimiser against the reference's on `points`: an objective no higher
/// than the reference's (up to the rounding of a sum over the points), the same coefficients, as many
/// starts at the best, fewer evaluations.
void check_against_reference(const std::string& name, const std::vector<LossPoint>& points) {
  FitOptions reference;
  reference.minimizer = FitMinimizer::nlopt_lbfgs;
  const FitResult old_fit = budget::fit_scaling_law(points, reference);
  const FitResult new_fit = budget::fit_scaling_law(points, FitOptions{});
  INFO(name << ": objective " << new_fit.summary.objective << " (reference " << old_fit.summary.objective
            << "), evaluations " << new_fit.summary.total_evaluations << " (" << old_fit.summary.total_evaluations
            << ")");
  CHECK(new_fit.summary.usable());
  CHECK(new_fit.summary.objective <= old_fit.summary.objective * (1.0 + 1e-14) + 1e-30);
  CHECK(max_relative_difference(new_fit.coefficients, old_fit.coefficients) < 1e-5);
  CHECK(new_fit.summary.starts_at_best >= old_fit.summary.starts_at_best);
  CHECK(new_fit.summary.total_evaluations < old_fit.summary.total_evaluations);
}

}  // namespace

TEST_CASE("scaling minimiser: Rosenbrock's minimum from its usual start", "[scaling][minimizer]") {
  Rosenbrock f;
  const auto found = budget::detail::minimize_bounded(f, MinimizerVector{-1.2, 1.0}, box(2, -5.0, 5.0));
  INFO("stop " << static_cast<int>(found.stop) << " after " << found.evaluations << " evaluations");
  CHECK(found.x[0] == Approx(1.0).epsilon(1e-8));
  CHECK(found.x[1] == Approx(1.0).epsilon(1e-8));
  CHECK(found.f < 1e-16);
  CHECK(found.hessians > 0);
  CHECK(found.evaluations < 100);
}

TEST_CASE("scaling minimiser: a bound in the way gives the box's constrained minimum", "[scaling][minimizer]") {
  // Rosenbrock with x ≤ 0.5: on the bound, f(0.5, y) is least at y = 0.25 (f = 0.25); inside, ∂f/∂x < 0
  // along the valley, so the bound holds.
  Rosenbrock f;
  MinimizerSettings s = box(2, -5.0, 5.0);
  s.upper[0] = 0.5;
  const auto found = budget::detail::minimize_bounded(f, MinimizerVector{-1.2, 1.0}, s);
  CHECK(found.x[0] == 0.5);
  CHECK(found.x[1] == Approx(0.25).epsilon(1e-8));
  CHECK(found.f == Approx(0.25).epsilon(1e-12));

  // A bowl centred outside the box on two axes: the minimum is the centre clipped into the box.
  Bowl bowl({2.0, -3.0, 0.25});
  const auto clipped = budget::detail::minimize_bounded(bowl, MinimizerVector{0.0, 0.0, 0.0}, box(3, -1.0, 1.0));
  CHECK(clipped.x[0] == 1.0);
  CHECK(clipped.x[1] == -1.0);
  CHECK(clipped.x[2] == Approx(0.25).epsilon(1e-12));
  // A start outside the box is clipped into it first.
  const auto from_outside = budget::detail::minimize_bounded(bowl, MinimizerVector{9.0, 9.0, 9.0}, box(3, -1.0, 1.0));
  CHECK(from_outside.x[2] == Approx(0.25).epsilon(1e-12));
}

TEST_CASE("scaling minimiser: max_evaluations stops it with the best point seen", "[scaling][minimizer]") {
  Rosenbrock f;
  MinimizerSettings s = box(2, -5.0, 5.0);
  s.max_evaluations = 4;
  const auto found = budget::detail::minimize_bounded(f, MinimizerVector{-1.2, 1.0}, s);
  CHECK(found.stop == MinimizerStop::max_evaluations);
  CHECK(found.evaluations == 4);
  MinimizerVector g{};
  CHECK(f.value(found.x, &g) == found.f);
  CHECK(found.f <= f.value(MinimizerVector{-1.2, 1.0}, nullptr));
}

TEST_CASE("scaling fit: the objective's Hessian matches central differences of its gradient", "[scaling][fit]") {
  const auto points = budget::detail::synthetic_paper_grid(budget::detail::paper_looped_coefficients(), "looped", 0.005, 3);
  const budget::detail::CentredData data(points);
  test::at_derivative_check_points(data, [](const HuberObjective& objective, const Theta& theta, double delta) {
    std::array<double, 36> hessian{};
    objective.hessian(theta, hessian);
    for (std::size_t k = 0; k < theta.size(); ++k) {
      const double h = 1e-6 * std::max(1.0, std::fabs(theta[k]));
      auto plus = theta, minus = theta;
      plus[k] += h;
      minus[k] -= h;
      Theta g_plus{}, g_minus{};
      objective.evaluate(plus, &g_plus);
      objective.evaluate(minus, &g_minus);
      for (std::size_t j = 0; j < theta.size(); ++j) {
        const double numeric = (g_plus[j] - g_minus[j]) / (2.0 * h);
        INFO("delta " << delta << ", entry (" << j << ", " << k << "): analytic " << hessian[j * 6 + k] << ", numeric "
                      << numeric);
        CHECK(hessian[j * 6 + k] == Approx(numeric).epsilon(1e-4).margin(1e-7));
        CHECK(hessian[j * 6 + k] == hessian[k * 6 + j]);
      }
    }
  });
}

TEST_CASE("scaling fit: the objective's log-sum-exp by terms and shifted agree with a long-double reference",
          "[scaling][fit]") {
  // Points with repeated cells and horizons (the terms are shared) and a θ with every exponent small
  // (the unshifted sum) or one above 600 (the shifted form): f and ∇f against Σ Huber(z − lse)
  // summed in long double.
  const auto points = budget::detail::synthetic_paper_grid(budget::detail::paper_baseline_coefficients(), "b", 0.01, 4);
  const budget::detail::CentredData data(points);
  CHECK(data.term_A_x.size() == 12);  // 12 cells
  CHECK(data.term_K_y.size() == 6);   // 6 horizons
  const double delta = 1e-3;
  const budget::detail::HuberObjective objective(data, delta);
  for (const budget::detail::Theta& theta :
       {budget::detail::Theta{0.4, -1.1, -0.9, 0.4, 0.2, 0.6}, budget::detail::Theta{0.4, 640.0, -0.9, 0.4, 0.2, 0.6},
        budget::detail::Theta{-700.0, -1.1, -0.9, 0.4, 0.2, 0.6}}) {
    long double f = 0.0L;
    std::array<long double, 6> g{};
    for (Eigen::Index i = 0; i < data.size(); ++i) {
      const long double t_E = theta[0], t_A = theta[1] + theta[4] * data.u[i] - theta[3] * data.x[i];
      const long double t_K = theta[2] - theta[5] * data.y[i];
      const long double m = std::max({t_E, t_A, t_K});
      const long double s = std::exp(t_E - m) + std::exp(t_A - m) + std::exp(t_K - m);
      const long double r = data.log_loss[i] - (m + std::log(s));
      f += std::fabs(r) <= delta ? 0.5L * r * r : delta * (std::fabs(r) - 0.5L * delta);
      const long double psi = std::clamp<long double>(r, -delta, delta);
      const long double W_E = std::exp(t_E - m) / s, W_A = std::exp(t_A - m) / s, W_K = std::exp(t_K - m) / s;
      g[0] -= psi * W_E, g[1] -= psi * W_A, g[2] -= psi * W_K;
      g[3] += psi * W_A * data.x[i], g[4] -= psi * W_A * data.u[i], g[5] += psi * W_K * data.y[i];
    }
    budget::detail::Theta gradient{};
    const double value = objective.evaluate(theta, &gradient);
    INFO("theta[0] " << theta[0] << ", theta[1] " << theta[1]);
    CHECK(value == Approx(static_cast<double>(f)).epsilon(1e-13));
    for (std::size_t j = 0; j < 6; ++j) CHECK(gradient[j] == Approx(static_cast<double>(g[j])).epsilon(1e-12).margin(1e-15));
  }
}

TEST_CASE("scaling fit: the Newton minimiser reaches the reference's optimum or a lower one", "[scaling][fit]") {
  using budget::detail::paper_baseline_coefficients;
  using budget::detail::paper_looped_coefficients;
  using budget::detail::synthetic_paper_grid;
  for (const std::uint64_t seed : {1u, 2u, 5u, 9u, 12u}) {
    check_against_reference("looped, seed " + std::to_string(seed), synthetic_paper_grid(paper_looped_coefficients(), "l", 0.005, seed));
    check_against_reference("baseline 2%, seed " + std::to_string(seed),
                            synthetic_paper_grid(paper_baseline_coefficients(), "b", 0.02, seed));
  }
  // The shipped examples, and Epoch AI's Chinchilla points (one S: b held), all and without the
  // five highest losses as Epoch fit them.
  const auto smelt = budget::read_loss_csv(std::string(BUDGET_SOURCE_DIR) + "/examples/scaling/smelt_synthetic.csv");
  for (const std::string arch : {"baseline", "looped"}) {
    std::vector<LossPoint> rows;
    for (const LossPoint& p : smelt.points) {
      if (p.arch == arch && p.domain.empty()) rows.push_back(p);
    }
    check_against_reference("smelt_synthetic " + arch, rows);
  }
  const auto chinchilla = budget::read_loss_csv(std::string(BUDGET_TEST_DATA_DIR) + "/chinchilla_epoch.csv").points;
  check_against_reference("Chinchilla, every point", chinchilla);
  std::vector<double> losses;
  for (const auto& p : chinchilla) losses.push_back(p.loss);
  std::sort(losses.begin(), losses.end());
  std::vector<LossPoint> kept;
  for (const auto& p : chinchilla) {
    if (p.loss < losses[losses.size() - 5]) kept.push_back(p);
  }
  check_against_reference("Chinchilla, Epoch's points", kept);
}

TEST_CASE("scaling fit: intercept-only fits agree with the reference minimiser", "[scaling][fit]") {
  // The per-domain fits of both minimisers with the same exponents (the reference's overall fit).
  const auto data = budget::read_loss_csv(std::string(BUDGET_TEST_DATA_DIR) + "/scaling_paired_domains.csv");
  for (const std::string& arch : budget::architectures(data.points)) {
    std::vector<LossPoint> rows;
    for (const LossPoint& p : data.points) {
      if (p.arch == arch) rows.push_back(p);
    }
    FitOptions reference;
    reference.minimizer = FitMinimizer::nlopt_lbfgs;
    const budget::ArchLaw old_law = budget::fit_arch_law(rows, reference);
    const auto new_domains = budget::fit_domain_laws(rows, old_law.overall.coefficients);
    REQUIRE(new_domains.size() == old_law.domains.size());
    REQUIRE(new_domains.size() == 2);
    for (std::size_t d = 0; d < new_domains.size(); ++d) {
      const FitResult& x = new_domains[d].fit;
      const FitResult& y = old_law.domains[d].fit;
      INFO(arch << ", domain " << new_domains[d].domain << ": objective " << x.summary.objective << " (reference "
                << y.summary.objective << ")");
      CHECK(x.summary.exponents_fixed);
      CHECK(x.summary.objective <= y.summary.objective * (1.0 + 1e-14));
      CHECK(max_relative_difference(x.coefficients, y.coefficients) < 1e-5);
      CHECK(x.summary.total_evaluations < y.summary.total_evaluations);
    }
  }
}
