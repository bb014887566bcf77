#include "scaling/scaling_objective.hpp"

#include <cmath>

namespace budget::detail {

CentredData::CentredData(const std::vector<LossPoint>& points) {
  const auto n = static_cast<Eigen::Index>(points.size());
  x.resize(n);
  u.resize(n);
  y.resize(n);
  log_loss.resize(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const LossPoint& p = points[static_cast<std::size_t>(i)];
    x[i] = std::log(p.F);
    u[i] = std::log1p(-p.S);
    y[i] = std::log(p.D);
    log_loss[i] = std::log(p.loss);
  }
  if (n > 0) {
    mean_log_F = x.mean();
    mean_log_one_minus_S = u.mean();
    mean_log_D = y.mean();
  }
  x -= mean_log_F;
  u -= mean_log_one_minus_S;
  y -= mean_log_D;
}

Theta to_theta(const ScalingCoefficients& k, const CentredData& data) {
  Theta t{};
  t[theta_log_E] = std::log(k.E);
  t[theta_alpha] = std::log(k.A) + k.b * data.mean_log_one_minus_S - k.a * data.mean_log_F;
  t[theta_kappa] = std::log(k.K) - k.c * data.mean_log_D;
  t[theta_a] = k.a;
  t[theta_b] = k.b;
  t[theta_c] = k.c;
  return t;
}

ScalingCoefficients to_coefficients(const Theta& t, const CentredData& data) {
  ScalingCoefficients k;
  k.E = std::exp(t[theta_log_E]);
  k.a = t[theta_a];
  k.b = t[theta_b];
  k.c = t[theta_c];
  k.A = std::exp(t[theta_alpha] - k.b * data.mean_log_one_minus_S + k.a * data.mean_log_F);
  k.K = std::exp(t[theta_kappa] + k.c * data.mean_log_D);
  return k;
}

HuberObjective::HuberObjective(const CentredData& data, double delta)
    : data_(data),
      delta_(delta),
      t_A_(data.size()),
      t_K_(data.size()),
      shift_(data.size()),
      w_E_(data.size()),
      w_A_(data.size()),
      w_K_(data.size()),
      sum_(data.size()),
      residual_(data.size()),
      abs_r_(data.size()),
      g_(data.size()),
      g_A_(data.size()),
      g_K_(data.size()) {}

void HuberObjective::predict(const Theta& t) const {
  const double e = t[theta_log_E];
  t_A_ = t[theta_alpha] + t[theta_b] * data_.u - t[theta_a] * data_.x;
  t_K_ = t[theta_kappa] - t[theta_c] * data_.y;
  shift_ = t_A_.max(t_K_).max(e);
  // Unnormalised softmax weights exp(t_j − m); the largest is 1, so nothing overflows.
  w_E_ = (e - shift_).exp();
  w_A_ = (t_A_ - shift_).exp();
  w_K_ = (t_K_ - shift_).exp();
  sum_ = w_E_ + w_A_ + w_K_;
  residual_ = data_.log_loss - (shift_ + sum_.log());
}

double HuberObjective::evaluate(const Theta& t, Theta* gradient) const {
  predict(t);
  const double d = delta_;
  // Into the scratch buffers (no allocation per evaluation: the fit evaluates thousands of times).
  abs_r_ = residual_.abs();
  const double f = (abs_r_ <= d).select(0.5 * residual_.square(), d * (abs_r_ - 0.5 * d)).sum();
  if (gradient != nullptr) {
    // g_i = −ψ(r_i)/s_i, so that ∂f/∂θ_j = Σ_i g_i · exp(t_j − m)·∂t_j/∂θ_j.
    g_ = -residual_.min(d).max(-d) / sum_;
    g_A_ = g_ * w_A_;
    g_K_ = g_ * w_K_;
    (*gradient)[theta_log_E] = (g_ * w_E_).sum();
    (*gradient)[theta_alpha] = g_A_.sum();
    (*gradient)[theta_kappa] = g_K_.sum();
    (*gradient)[theta_a] = -(g_A_ * data_.x).sum();
    (*gradient)[theta_b] = (g_A_ * data_.u).sum();
    (*gradient)[theta_c] = -(g_K_ * data_.y).sum();
  }
  return f;
}

Eigen::ArrayXd HuberObjective::residuals(const Theta& t) const {
  predict(t);
  return residual_;
}

}  // namespace budget::detail
