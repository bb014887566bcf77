#pragma once
// Private: synthetic loss data on a grid like the SMELT paper's, for tests and benchmarks.

#include <cstdint>
#include <string>
#include <vector>

#include "budget/scaling_data.hpp"
#include "budget/scaling_law.hpp"

namespace budget::detail {

/// The paper's published coefficients ("Scaling law" in PAPER.md).
ScalingCoefficients paper_baseline_coefficients();
ScalingCoefficients paper_looped_coefficients();

/// 12 cells (4 sizes, F = 6e8, 1.5e9, 4e9, 1e10, × sparsities 0.85, 0.95, 0.97; F rises by 1% and
/// 2% at the two higher sparsities, as matched MoE models do) × 6 token horizons
/// D = 2e10, 3e10, 6e10, 1.1e11, 1.6e11, 2.2e11: 72 points with L = law(F, S, D)·exp(σ·z),
/// z standard normal from `seed` (σ = 0: exact). Cells are named "<size>-S<sparsity>", the same
/// for every arch, so two archs form a paired design.
std::vector<LossPoint> synthetic_paper_grid(const ScalingCoefficients& law, const std::string& arch,
                                            double noise_sigma = 0.0, std::uint64_t seed = 1);

}  // namespace budget::detail
