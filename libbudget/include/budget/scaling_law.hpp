#pragma once
/// \file
/// The scaling law of the SMELT paper ("Scaling law" in PAPER.md) and its coefficients file.
///
///     L(F, S, D) = E + A·(1 − S)^b·F^(−a) + K·D^(−c)
///
/// F is the per-token training FLOPs, S the compute-equivalent sparsity in [0, 1), D the number of
/// training tokens, L the loss (nats per token). With S = 0 and F = 6N this is Chinchilla's
/// L(N, D) = E + A_ch·N^(−α) + B·D^(−β) with α = a, β = c, B = K and A_ch = A·6^(−a).
///
/// Thread safety: Every function here is reentrant: concurrent calls are safe.

#include <optional>
#include <string>

namespace budget {

/// The six coefficients of the law (see the file comment). E is in loss units; A and K carry the
/// units that make their terms losses; a, b, c are dimensionless exponents.
struct ScalingCoefficients {
  double E = 0.0;  ///< the irreducible loss
  double A = 0.0;  ///< the scale of the compute term A·(1 − S)^b·F^(−a)
  double K = 0.0;  ///< the scale of the data term K·D^(−c)
  double a = 0.0;  ///< the FLOPs exponent
  double b = 0.0;  ///< the sparsity exponent
  double c = 0.0;  ///< the data exponent
};

/// L(F, S, D). The caller's duty: F > 0, D > 0, 0 ≤ S < 1.
double predict_loss(const ScalingCoefficients& coefficients, double F, double S, double D);

/// Throws budget::Error (naming `source`) unless E ≥ 0, A > 0, K > 0, a > 0, c > 0, b ≥ 0, all
/// finite: the domain on which the compute-optimal frontier exists.
void validate_coefficients(const ScalingCoefficients& coefficients, const std::string& source);

/// Contents of a coefficients file:
///
///     {"schema_version": 1, "arch": "looped", "source": "optional free text",
///      "coefficients": {"E": 1.4493, "A": 1963, "K": 5.264e6, "a": 0.3892, "b": 0.146, "c": 0.7011},
///      "fit_summary": {...optional, written by `budget-match fit`; only "compute_range" is read...}}
///
/// Unknown keys are errors (with a did-you-mean suggestion).
struct CoefficientsFile {
  static constexpr int schema_version = 1;
  std::string arch;
  std::string source;  ///< free text: where the coefficients come from (may be empty)
  ScalingCoefficients coefficients;
  /// The "fit_summary" object as compact JSON text (keys sorted), not interpreted; empty when
  /// absent. `budget-match fit` writes render's fit_summary_json() (budget_render/fit.hpp) here.
  std::string fit_summary_json;
  /// The fit_summary's "compute_range" [min C, max C]: the compute C = F·D of the data the law was
  /// fitted on (0, 0 when absent). A range that is not two numbers with 0 < min ≤ max is refused.
  double fitted_compute_min = 0.0;
  double fitted_compute_max = 0.0;
};

/// Parses a coefficients file from its text; errors name `source` and the JSON pointer.
CoefficientsFile parse_coefficients_json(const std::string& text, const std::string& source);

/// Reads and parses the coefficients file at `path`.
CoefficientsFile read_coefficients_file(const std::string& path);

/// The file as pretty-printed JSON text (2-space indent, trailing newline). Coefficients are
/// written with 17 significant digits so that reading the file back gives the same doubles.
std::string coefficients_to_json(const CoefficientsFile& file);

}  // namespace budget
