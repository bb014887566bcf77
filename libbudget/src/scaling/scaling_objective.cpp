#include "scaling/scaling_objective.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

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
  std::map<std::pair<double, double>, int> cells;
  std::map<double, int> horizons;
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto cell = cells.emplace(std::pair{x[i], u[i]}, static_cast<int>(cells.size())).first;
    if (cell->second == static_cast<int>(term_A_x.size())) {
      term_A_x.push_back(x[i]);
      term_A_u.push_back(u[i]);
    }
    term_A_of.push_back(cell->second);
    const auto horizon = horizons.emplace(y[i], static_cast<int>(horizons.size())).first;
    if (horizon->second == static_cast<int>(term_K_y.size())) term_K_y.push_back(y[i]);
    term_K_of.push_back(horizon->second);
  }
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
      term_A_(data.term_A_x.size()),
      term_K_(data.term_K_y.size()),
      weight_E_(data.size()),
      weight_A_(data.size()),
      weight_K_(data.size()),
      residual_(data.size()) {}

namespace {
constexpr double largest_unshifted_exponent = 600.0;  // e^600 ≈ 4e260: three of them stay finite
}  // namespace

/// lse = log(E + P_A + P_K) with each term computed once per distinct value; false (nothing
/// written) when an exponent's magnitude exceeds largest_unshifted_exponent.
bool HuberObjective::predict_by_terms(const Theta& t) const {
  const double e = t[theta_log_E];
  if (!(std::fabs(e) <= largest_unshifted_exponent)) return false;
  for (std::size_t g = 0; g < term_A_.size(); ++g) {
    term_A_[g] = t[theta_alpha] + t[theta_b] * data_.term_A_u[g] - t[theta_a] * data_.term_A_x[g];
    if (!(std::fabs(term_A_[g]) <= largest_unshifted_exponent)) return false;
  }
  for (std::size_t h = 0; h < term_K_.size(); ++h) {
    term_K_[h] = t[theta_kappa] - t[theta_c] * data_.term_K_y[h];
    if (!(std::fabs(term_K_[h]) <= largest_unshifted_exponent)) return false;
  }
  for (double& v : term_A_) v = std::exp(v);
  for (double& v : term_K_) v = std::exp(v);
  const double E = std::exp(e);
  for (Eigen::Index i = 0; i < data_.size(); ++i) {
    const double p_A = term_A_[static_cast<std::size_t>(data_.term_A_of[static_cast<std::size_t>(i)])];
    const double p_K = term_K_[static_cast<std::size_t>(data_.term_K_of[static_cast<std::size_t>(i)])];
    const double sum = E + p_A + p_K;
    const double inverse = 1.0 / sum;
    weight_E_[i] = E * inverse;
    weight_A_[i] = p_A * inverse;
    weight_K_[i] = p_K * inverse;
    residual_[i] = data_.log_loss[i] - std::log(sum);
  }
  return true;
}

/// lse = m + log Σ_j exp(t_j − m), m = max_j t_j, per point: the largest term is 1, nothing overflows.
void HuberObjective::predict_shifted(const Theta& t) const {
  const double e = t[theta_log_E];
  for (Eigen::Index i = 0; i < data_.size(); ++i) {
    const double t_A = t[theta_alpha] + t[theta_b] * data_.u[i] - t[theta_a] * data_.x[i];
    const double t_K = t[theta_kappa] - t[theta_c] * data_.y[i];
    const double m = std::max({e, t_A, t_K});
    const double w_E = std::exp(e - m), w_A = std::exp(t_A - m), w_K = std::exp(t_K - m);
    const double sum = w_E + w_A + w_K;
    weight_E_[i] = w_E / sum;
    weight_A_[i] = w_A / sum;
    weight_K_[i] = w_K / sum;
    residual_[i] = data_.log_loss[i] - (m + std::log(sum));
  }
}

void HuberObjective::predict(const Theta& t) const {
  if (!predict_by_terms(t)) predict_shifted(t);
  predicted_at_ = t;
  predicted_ = true;
}

double HuberObjective::evaluate(const Theta& t, Theta* gradient) const {
  predict(t);
  const double d = delta_;
  double f = 0.0;
  Theta g{};
  for (Eigen::Index i = 0; i < data_.size(); ++i) {
    const double r = residual_[i];
    const double abs_r = std::fabs(r);
    f += abs_r <= d ? 0.5 * r * r : d * (abs_r - 0.5 * d);
    // ∂f/∂θ = −Σ ψ(r)·∂lse/∂θ.
    const double psi = std::clamp(r, -d, d);
    const double psi_A = psi * weight_A_[i], psi_K = psi * weight_K_[i];
    g[theta_log_E] -= psi * weight_E_[i];
    g[theta_alpha] -= psi_A;
    g[theta_kappa] -= psi_K;
    g[theta_a] += psi_A * data_.x[i];
    g[theta_b] -= psi_A * data_.u[i];
    g[theta_c] += psi_K * data_.y[i];
  }
  if (gradient != nullptr) *gradient = g;
  return f;
}

void HuberObjective::hessian(const Theta& t, std::array<double, theta_size * theta_size>& out) const {
  if (!predicted_ || predicted_at_ != t) predict(t);
  const double d = delta_;
  // The lower triangle of Σ (ψ' + ψ)·v·vᵀ, packed: (j, k), j ≥ k, at j(j + 1)/2 + k.
  std::array<double, theta_size*(theta_size + 1) / 2> outer{};
  // Σ ψ·W_E; Σ ψ·W_A·(1, x, u, x², x·u, u²); Σ ψ·W_K·(1, y, y²).
  double psi_E = 0.0, psi_A = 0.0, psi_A_x = 0.0, psi_A_u = 0.0, psi_A_xx = 0.0, psi_A_xu = 0.0, psi_A_uu = 0.0;
  double psi_K = 0.0, psi_K_y = 0.0, psi_K_yy = 0.0;
  for (Eigen::Index i = 0; i < data_.size(); ++i) {
    const double r = residual_[i];
    const double psi = std::clamp(r, -d, d);
    const double scale = (std::fabs(r) <= d ? 1.0 : 0.0) + psi;
    const double x = data_.x[i], u = data_.u[i], y = data_.y[i];
    const double W_E = weight_E_[i], W_A = weight_A_[i], W_K = weight_K_[i];
    const std::array<double, theta_size> v{W_E, W_A, W_K, -W_A * x, W_A * u, -W_K * y};
    std::size_t at = 0;
    for (std::size_t j = 0; j < theta_size; ++j) {
      const double scaled = scale * v[j];
      for (std::size_t k = 0; k <= j; ++k) outer[at++] += scaled * v[k];
    }
    const double a = psi * W_A, k = psi * W_K;
    psi_E += psi * W_E;
    psi_A += a, psi_A_x += a * x, psi_A_u += a * u, psi_A_xx += a * x * x, psi_A_xu += a * x * u, psi_A_uu += a * u * u;
    psi_K += k, psi_K_y += k * y, psi_K_yy += k * y * y;
  }
  const auto set = [&](int j, int k, double v) {
    out[static_cast<std::size_t>(j * theta_size + k)] = v;
    out[static_cast<std::size_t>(k * theta_size + j)] = v;
  };
  std::size_t at = 0;
  for (int j = 0; j < theta_size; ++j) {
    for (int k = 0; k <= j; ++k) set(j, k, outer[at++]);
  }
  // − ψ·Σ_j W_j·∇t_j·∇t_jᵀ: ∇t_E = e₀, ∇t_A = (0, 1, 0, −x, u, 0), ∇t_K = (0, 0, 1, 0, 0, −y).
  const auto subtract = [&](int j, int k, double v) { set(j, k, out[static_cast<std::size_t>(j * theta_size + k)] - v); };
  subtract(theta_log_E, theta_log_E, psi_E);
  subtract(theta_alpha, theta_alpha, psi_A);
  subtract(theta_a, theta_alpha, -psi_A_x);
  subtract(theta_b, theta_alpha, psi_A_u);
  subtract(theta_a, theta_a, psi_A_xx);
  subtract(theta_b, theta_a, -psi_A_xu);
  subtract(theta_b, theta_b, psi_A_uu);
  subtract(theta_kappa, theta_kappa, psi_K);
  subtract(theta_c, theta_kappa, -psi_K_y);
  subtract(theta_c, theta_c, psi_K_yy);
}

Eigen::ArrayXd HuberObjective::residuals(const Theta& t) const {
  predict(t);
  return residual_;
}

}  // namespace budget::detail
