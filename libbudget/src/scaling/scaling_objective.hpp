#pragma once
// Private: the fit's objective, its analytic gradient and its parameterisation.
//
// Internal parameters θ (all unbounded reals except where FitBounds says otherwise):
//
//     θ = (e, α, κ, a, b, c),   e = log E,
//     α = log A + b·m_u − a·m_x   (log of the A-term at the data's centre),
//     κ = log K − c·m_y           (log of the K-term at the data's centre),
//
// with x = log F, u = log(1 − S), y = log D and m_x, m_u, m_y their means over the points.
// Centring decorrelates the intercepts from the exponents (log F spans ~3 around ~21, so an
// uncentred log A moves ~21× as far as a): the Hessian is far better conditioned, L-BFGS needs
// fewer steps and recovers coefficients to ~1e-9.
//
// Per point i, with x̃ = x − m_x etc.:
//     t_E = e,  t_A = α + b·ũ − a·x̃,  t_K = κ − c·ỹ,
//     log L_pred = lse(t_E, t_A, t_K) = m + log Σ_j exp(t_j − m),  m = max_j t_j,
//     r = log L_obs − log L_pred,
//     f = Σ_i Huber_δ(r_i),  Huber_δ(r) = r²/2 if |r| ≤ δ, else δ·(|r| − δ/2).
// Gradient: ∂f/∂θ = −Σ_i ψ(r_i)·∂lse_i/∂θ with ψ(r) = clamp(r, −δ, δ) and, writing w_j for the
// softmax weights exp(t_j − lse): ∂lse/∂e = w_E, ∂lse/∂α = w_A, ∂lse/∂κ = w_K,
// ∂lse/∂a = −w_A·x̃, ∂lse/∂b = w_A·ũ, ∂lse/∂c = −w_K·ỹ.

#include <array>
#include <vector>

#include <Eigen/Core>

#include "budget/scaling_data.hpp"
#include "budget/scaling_law.hpp"

namespace budget::detail {

enum ThetaIndex : int { theta_log_E = 0, theta_alpha, theta_kappa, theta_a, theta_b, theta_c, theta_size };

using Theta = std::array<double, theta_size>;

/// The points in the objective's form: centred logs of F, 1 − S, D and the log of the loss, and the
/// distinct values each power-law term depends on (a designed experiment repeats them: its cells ×
/// its horizons), so that an evaluation takes one exponential per distinct value, not per point.
struct CentredData {
  Eigen::ArrayXd x;  ///< log F − m_x
  Eigen::ArrayXd u;  ///< log(1 − S) − m_u
  Eigen::ArrayXd y;  ///< log D − m_y
  Eigen::ArrayXd log_loss;
  double mean_log_F = 0.0;
  double mean_log_one_minus_S = 0.0;
  double mean_log_D = 0.0;
  /// The distinct (x̃, ũ) pairs and ỹ values, and each point's index into them.
  std::vector<double> term_A_x, term_A_u, term_K_y;
  std::vector<int> term_A_of, term_K_of;

  explicit CentredData(const std::vector<LossPoint>& points);
  Eigen::Index size() const { return x.size(); }
};

/// θ of `coefficients` for `data` (log E of E = 0 is −∞; the caller clips).
Theta to_theta(const ScalingCoefficients& coefficients, const CentredData& data);
ScalingCoefficients to_coefficients(const Theta& theta, const CentredData& data);

/// Σ Huber_δ(log L_obs − log L_pred), its gradient and its Hessian. Holds scratch buffers: one per
/// thread.
///
/// How an evaluation computes lse = log(E + P_A + P_K), P_A = exp(t_A), P_K = exp(t_K): when no
/// exponent exceeds ±600 in magnitude (every realistic θ: e is bounded by [−20, 10] and the terms at
/// the data's centre by [−50, 50]), the three terms are summed unshifted, each P_A and P_K computed once
/// per distinct value it depends on (exp(α + b·ũ − a·x̃) per cell, exp(κ − c·ỹ) per horizon): s ≥ E ≥
/// e^−600 stays a normal number and nothing overflows. Otherwise it shifts by the largest term,
/// lse = m + log Σ exp(t_j − m), per point. Both give lse to within rounding.
class HuberObjective {
 public:
  HuberObjective(const CentredData& data, double delta);

  /// f(θ); when `gradient` is not null, ∂f/∂θ too.
  double evaluate(const Theta& theta, Theta* gradient) const;

  /// ∂²f/∂θ² (row-major 6×6), reusing the last evaluation's work when it was at the same θ:
  ///     ∂²f/∂θ² = Σ_i ψ'(r_i)·v_i·v_iᵀ − ψ(r_i)·∂²lse_i/∂θ²,   v_i = ∂lse_i/∂θ,
  ///     ∂²lse/∂θ² = Σ_j W_j·∇t_j·∇t_jᵀ − v·vᵀ   (the t_j are linear in θ),
  /// W_j the softmax weights, ψ'(r) = 1 where |r| ≤ δ and 0 elsewhere (the Huber loss's second
  /// derivative; at |r| = δ its left one).
  void hessian(const Theta& theta, std::array<double, theta_size * theta_size>& hessian) const;

  /// log L_obs − log L_pred for every point.
  Eigen::ArrayXd residuals(const Theta& theta) const;

 private:
  void predict(const Theta& theta) const;  // fills the scratch buffers, remembers θ
  bool predict_by_terms(const Theta& theta) const;
  void predict_shifted(const Theta& theta) const;

  const CentredData& data_;
  double delta_;
  // Scratch: per distinct value, the power-law terms; per point, the softmax weights W_E, W_A, W_K
  // and the residual r.
  mutable std::vector<double> term_A_, term_K_;
  mutable Eigen::ArrayXd weight_E_, weight_A_, weight_K_, residual_;
  mutable Theta predicted_at_{};  // the θ of the scratch buffers
  mutable bool predicted_ = false;
};

}  // namespace budget::detail
