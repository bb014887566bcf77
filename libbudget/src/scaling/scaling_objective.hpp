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

/// The points in the objective's form: centred logs of F, 1 − S, D and the log of the loss.
struct CentredData {
  Eigen::ArrayXd x;  ///< log F − m_x
  Eigen::ArrayXd u;  ///< log(1 − S) − m_u
  Eigen::ArrayXd y;  ///< log D − m_y
  Eigen::ArrayXd log_loss;
  double mean_log_F = 0.0;
  double mean_log_one_minus_S = 0.0;
  double mean_log_D = 0.0;

  explicit CentredData(const std::vector<LossPoint>& points);
  Eigen::Index size() const { return x.size(); }
};

/// θ of `coefficients` for `data` (log E of E = 0 is −∞; the caller clips).
Theta to_theta(const ScalingCoefficients& coefficients, const CentredData& data);
ScalingCoefficients to_coefficients(const Theta& theta, const CentredData& data);

/// Σ Huber_δ(log L_obs − log L_pred) and its gradient. Holds scratch buffers: one per thread.
class HuberObjective {
 public:
  HuberObjective(const CentredData& data, double delta);

  /// f(θ); when `gradient` is not null, ∂f/∂θ too.
  double evaluate(const Theta& theta, Theta* gradient) const;

  /// log L_obs − log L_pred for every point.
  Eigen::ArrayXd residuals(const Theta& theta) const;

 private:
  void predict(const Theta& theta) const;  // fills the scratch buffers

  const CentredData& data_;
  double delta_;
  // Scratch: the three log-terms' weights relative to their max, their sum, the prediction.
  mutable Eigen::ArrayXd t_A_, t_K_, shift_, w_E_, w_A_, w_K_, sum_, residual_;
  // Scratch of evaluate(): |r|, and the gradient's per-point factors.
  mutable Eigen::ArrayXd abs_r_, g_, g_A_, g_K_;
};

}  // namespace budget::detail
