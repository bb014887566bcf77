#pragma once
/// \file
/// Compute-optimal planning from fitted coefficients (docs/scaling.md, "Frontier").
///
/// A training run with per-token FLOPs F on D tokens costs C = F·D. For a budget C the loss
/// L(F, S, C/F) is minimised at
///
///     F*(C, S) = (a·A'·C^c / (c·K))^(1/(a+c)),   A' = A·(1 − S)^b,   D* = C / F*,
///
/// where the frontier is L*(C, S) = E + P(S)·C^(−γ), γ = a·c/(a+c) and
/// P(S) = (a+c)·(A'/c)^(c/(a+c))·(K/a)^(a/(a+c)). Tokens per dense-equivalent parameter at the
/// optimum: 6·D*/F* (a dense model with N parameters has F = 6N).
///
/// Thread safety: Every function here is reentrant: concurrent calls are safe.

#include "budget/scaling_law.hpp"

namespace budget {

/// γ = a·c/(a + c), the exponent of the frontier's reducible loss.
double frontier_exponent(const ScalingCoefficients& coefficients);

/// P(S) of L*(C, S) = E + P(S)·C^(−γ).
double frontier_prefactor(const ScalingCoefficients& coefficients, double S);

/// The compute-optimal allocation of a budget.
struct FrontierPoint {
  double C = 0.0;     ///< budget, FLOPs (= F·D)
  double S = 0.0;     ///< sparsity
  double F = 0.0;     ///< F*, per-token training FLOPs
  double D = 0.0;     ///< D* = C / F*, tokens
  double loss = 0.0;  ///< L*(C, S)
  double tokens_per_parameter = 0.0;  ///< 6·D*/F*
};

/// The closed-form optimum for budget C > 0 at sparsity 0 ≤ S < 1 (budget::Error otherwise).
FrontierPoint compute_optimal(const ScalingCoefficients& coefficients, double C, double S);

/// L*(C, S) = E + P(S)·C^(−γ).
double frontier_loss(const ScalingCoefficients& coefficients, double C, double S);

/// The budget C at which the frontier reaches `loss`: L*(C, S) = loss. Found by a bracketing root
/// find in log C (geometric expansion, then Brent's method to full double precision) on the
/// monotone decreasing L*. Throws budget::Error when loss ≤ E (never reached).
double compute_to_reach(const ScalingCoefficients& coefficients, double loss, double S);

/// The compute-efficiency gain of `target` over `reference` at the target's budget C:
/// G = 1 − C / C_ref, where L*_ref(C_ref, S) = L*_tgt(C, S).
struct Gain {
  double C_target = 0.0;
  double C_reference = 0.0;
  double loss = 0.0;  ///< L*_tgt(C_target, S), the loss both reach
  double gain = 0.0;  ///< 1 − C_target / C_reference (negative when the target is worse)
};

/// Throws budget::Error when the reference's asymptote E is at or above the target's loss
/// (the reference never reaches it), naming both numbers.
Gain ce_gain(const ScalingCoefficients& target, const ScalingCoefficients& reference, double C, double S);

}  // namespace budget
