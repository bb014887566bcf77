// Compute-optimal frontier and compute-efficiency gain.

#include <catch2/catch.hpp>

#include <cmath>

#include "budget/error.hpp"
#include "budget/scaling_law.hpp"
#include "budget/scaling_plan.hpp"
#include "scaling/scaling_synthetic.hpp"

using budget::ScalingCoefficients;
using budget::detail::paper_baseline_coefficients;
using budget::detail::paper_looped_coefficients;
using Catch::Matchers::Contains;

namespace {

/// argmin over log F of L(F, S, C/F) by brute force: a dense grid over F ∈ [1e3, C/1e3] (no use
/// of the closed form), then golden-section search in the best grid interval.
double brute_force_log_F(const ScalingCoefficients& k, double C, double S) {
  const auto loss = [&](double log_F) { return budget::predict_loss(k, std::exp(log_F), S, C / std::exp(log_F)); };
  const double lo = std::log(1e3), hi = std::log(C) - std::log(1e3);
  constexpr int steps = 20000;
  int best = 0;
  for (int i = 1; i <= steps; ++i) {
    if (loss(lo + (hi - lo) * i / steps) < loss(lo + (hi - lo) * best / steps)) best = i;
  }
  double a = lo + (hi - lo) * std::max(best - 1, 0) / steps;
  double b = lo + (hi - lo) * std::min(best + 1, steps) / steps;
  const double ratio = (std::sqrt(5.0) - 1.0) / 2.0;
  for (int i = 0; i < 200 && b - a > 1e-12; ++i) {
    const double x1 = b - ratio * (b - a), x2 = a + ratio * (b - a);
    if (loss(x1) < loss(x2)) b = x2; else a = x1;
  }
  return 0.5 * (a + b);
}

}  // namespace

TEST_CASE("scaling plan: the paper's frontier exponents γ = 0.237 and 0.250", "[scaling][plan]") {
  CHECK(budget::frontier_exponent(paper_baseline_coefficients()) == Approx(0.237).margin(5e-4));
  CHECK(budget::frontier_exponent(paper_looped_coefficients()) == Approx(0.250).margin(5e-4));
  const ScalingCoefficients k{1.0, 1.0, 1.0, 0.3, 0.0, 0.6};
  CHECK(budget::frontier_exponent(k) == Approx(0.3 * 0.6 / 0.9).epsilon(1e-15));
}

TEST_CASE("scaling plan: the paper's gain at C = 1e21, S = 0.85 is 18.0%", "[scaling][plan]") {
  const budget::Gain gain = budget::ce_gain(paper_looped_coefficients(), paper_baseline_coefficients(), 1e21, 0.85);
  CHECK(gain.gain == Approx(0.180).margin(0.002));
  CHECK(gain.C_target == 1e21);
  CHECK(gain.C_reference > 1e21);
  // Both frontiers reach the same loss: the target at C, the reference at C_ref.
  CHECK(budget::frontier_loss(paper_looped_coefficients(), 1e21, 0.85) == Approx(gain.loss).epsilon(1e-15));
  CHECK(budget::frontier_loss(paper_baseline_coefficients(), gain.C_reference, 0.85) == Approx(gain.loss).epsilon(1e-14));
}

TEST_CASE("scaling plan: closed-form optimum equals a brute-force minimisation over F", "[scaling][plan]") {
  for (const ScalingCoefficients& k : {paper_baseline_coefficients(), paper_looped_coefficients(),
                                       ScalingCoefficients{1.69, 406.4 * std::pow(6.0, 0.34), 410.7, 0.34, 0.0, 0.28}}) {
    for (double C : {1e18, 1e21, 1e24}) {
      for (double S : {0.0, 0.85, 0.97}) {
        const budget::FrontierPoint p = budget::compute_optimal(k, C, S);
        const double log_F = brute_force_log_F(k, C, S);
        INFO("C " << C << ", S " << S << ": closed form F* " << p.F << ", brute force " << std::exp(log_F));
        // The minimum is flat (loss error ∝ (Δ log F)²): the argmin is found to ~1e-7 only.
        CHECK(std::log(p.F) == Approx(log_F).margin(1e-5));
        const double brute_loss = budget::predict_loss(k, std::exp(log_F), S, C / std::exp(log_F));
        CHECK(p.loss == Approx(brute_loss).epsilon(1e-12));
        // L* = E + P·C^−γ equals the law at (F*, D*), and D* = C/F*, TPP = 6·D*/F*.
        CHECK(p.loss == Approx(budget::predict_loss(k, p.F, S, p.D)).epsilon(1e-13));
        CHECK(p.F * p.D == Approx(C).epsilon(1e-14));
        CHECK(p.tokens_per_parameter == Approx(6.0 * p.D / p.F).epsilon(1e-15));
        CHECK(p.loss == Approx(k.E + budget::frontier_prefactor(k, S) * std::pow(C, -budget::frontier_exponent(k)))
                            .epsilon(1e-14));
      }
    }
  }
}

TEST_CASE("scaling plan: the root find agrees with the closed-form inverse of L*", "[scaling][plan]") {
  const ScalingCoefficients k = paper_baseline_coefficients();
  const double S = 0.95;
  const double gamma = budget::frontier_exponent(k), P = budget::frontier_prefactor(k, S);
  // C = (P/(L − E))^(1/γ); L − E loses digits near E (relative error ulp(E)/(L − E)), so the
  // losses here stay ≥ 0.006 above E and the agreement is to ~1e-13.
  for (double loss : {1.45, 1.6, 1.9, 3.0, 50.0}) {
    const double closed_form = std::pow(P / (loss - k.E), 1.0 / gamma);
    CHECK(budget::compute_to_reach(k, loss, S) == Approx(closed_form).epsilon(1e-11));
  }
  CHECK_THROWS_WITH(budget::compute_to_reach(k, k.E, S), Contains("never reaches loss 1.4439: its asymptote E = 1.4439"));
  CHECK_THROWS_WITH(budget::compute_to_reach(k, 1.0, S), Contains("never reaches"));
}

TEST_CASE("scaling plan: gains are zero against oneself and change sign when swapped", "[scaling][plan]") {
  const ScalingCoefficients t = paper_looped_coefficients(), r = paper_baseline_coefficients();
  CHECK(budget::ce_gain(r, r, 1e21, 0.85).gain == Approx(0.0).margin(1e-13));
  const budget::Gain forward = budget::ce_gain(t, r, 1e21, 0.85);
  // Swapped: the baseline at C_ref reaches what the looped model reaches at 1e21, so the looped
  // model is the reference that needs only 1e21: G' = 1 − C_ref/1e21 = −G/(1 − G).
  const budget::Gain backward = budget::ce_gain(r, t, forward.C_reference, 0.85);
  CHECK(backward.C_reference == Approx(1e21).epsilon(1e-12));
  CHECK(backward.gain == Approx(-forward.gain / (1.0 - forward.gain)).epsilon(1e-10));
}

TEST_CASE("scaling plan: errors name the value and the limit", "[scaling][plan]") {
  const ScalingCoefficients t = paper_looped_coefficients();
  ScalingCoefficients high_floor = paper_baseline_coefficients();
  high_floor.E = 2.5;  // above the target's L*(1e21) ≈ 1.74: the reference never gets there
  CHECK_THROWS_WITH(budget::ce_gain(t, high_floor, 1e21, 0.85),
                    Contains("reference frontier never reaches the target's loss 1.74") &&
                        Contains("asymptote E = 2.5 is not below it"));
  CHECK_THROWS_WITH(budget::compute_optimal(t, -1.0, 0.5), Contains("budget C = -1 is not allowed"));
  CHECK_THROWS_WITH(budget::compute_optimal(t, 1e21, 1.0), Contains("sparsity S = 1 is not allowed; allowed: [0, 1)"));
  ScalingCoefficients bad = t;
  bad.a = 0.0;
  CHECK_THROWS_WITH(budget::compute_optimal(bad, 1e21, 0.5), Contains("coefficient a = 0 is not allowed"));
}
