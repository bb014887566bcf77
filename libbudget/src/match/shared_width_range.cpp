#include "match/shared_width_range.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

namespace budget::match_detail {
namespace {

std::atomic<bool> shared_width_range_enabled{true};

/// The S interval [lo, hi] where a + b·S <= c (b may be 0: all or nothing), intersected into it.
void keep_where_at_most(double a, double b, double c, double& lo, double& hi) {
  if (b > 0.0) {
    hi = std::min(hi, (c - a) / b);
  } else if (b < 0.0) {
    lo = std::max(lo, (c - a) / b);
  } else if (a > c) {
    hi = -std::numeric_limits<double>::infinity();
  }
}

/// The same for a + b·S >= c.
void keep_where_at_least(double a, double b, double c, double& lo, double& hi) {
  keep_where_at_most(-a, -b, -c, lo, hi);
}

/// The budgets' bounds and the ranges both cases read.
struct SharedRangeInputs {
  double F_lo, F_hi, N_lo, N_hi, e_min, e_max, w_first, w_last;
};

/// Separate widths: the S interval of the header's conditions.
void untied_interval(const Coefficients& k, const SharedRangeInputs& in, double& lo, double& hi) {
  // Wa(S) = wa0 − r·S, Wb(S) = wb0 − r·S: the F band's ends (docs in the header).
  const double r = k.fS / k.fW;
  const double wa0 = (in.F_lo - k.f0 - k.fE * in.e_max) / k.fW, wb0 = (in.F_hi - k.f0 - k.fE * in.e_min) / k.fW;
  keep_where_at_least(wb0, -r, in.w_first, lo, hi);  // Wb(S) >= W_first
  keep_where_at_most(wa0, -r, in.w_last, lo, hi);    // Wa(S) <= W_last
  // N at the fewest experts and the narrowest width the F band allows, at most N_hi.
  const double c_min = k.nW + in.e_min * k.nEW, n_min = k.n0 + in.e_min * k.nE;
  keep_where_at_most(n_min + c_min * wa0, k.nS - c_min * r, in.N_hi, lo, hi);
  keep_where_at_most(n_min + c_min * in.w_first, k.nS, in.N_hi, lo, hi);
  // N at the most experts and the widest width the F band allows, at least N_lo.
  const double c_max = k.nW + in.e_max * k.nEW, n_max = k.n0 + in.e_max * k.nE;
  keep_where_at_least(n_max + c_max * wb0, k.nS - c_max * r, in.N_lo, lo, hi);
  keep_where_at_least(n_max + c_max * in.w_last, k.nS, in.N_lo, lo, hi);
}

/// Shared width tied to the routed width (W = S): F = f0 + fE·E + (fW + fS)·S needs (fW + fS)·S in
/// [F_lo − f0 − fE·E_max, F_hi − f0 − fE·E_min]: the shared widths whose own routed width lies in
/// their FLOPs band (flops_width_band()), a few lattice steps instead of the whole lattice. The
/// parameter bound is left to narrow_by_params() and solve_experts() at each of them, so that the
/// walk solves exactly where it did (the summary's closed-form solves unchanged).
void tied_interval(const Coefficients& k, const SharedRangeInputs& in, double& lo, double& hi) {
  keep_where_at_least(k.f0 + k.fE * in.e_max, k.fW + k.fS, in.F_lo, lo, hi);
  keep_where_at_most(k.f0 + k.fE * in.e_min, k.fW + k.fS, in.F_hi, lo, hi);
  keep_where_at_least(0.0, 1.0, in.w_first, lo, hi);  // S is a routed width
  keep_where_at_most(0.0, 1.0, in.w_last, lo, hi);
}

}  // namespace

SharedWidthRange shared_width_range(const SearchSpace& space, const Coefficients& k, double pruning_bound) {
  const Progression& shareds = space.shareds();
  SharedWidthRange range{0, shareds.count(), false};
  if (!shared_width_range_enabled.load(std::memory_order_relaxed)) return range;
  if (space.dense() || space.experts().is_fixed() || !space.has_shared()) return range;
  const MatchConstraints& c = space.constraints();
  const double fbound = flops_bound(c, pruning_bound), nbound = params_bound(c, pruning_bound);
  if (!std::isfinite(fbound) || !std::isfinite(nbound)) return range;
  if (!(k.fW > 0.0 && k.fS > 0.0 && k.fE >= 0.0 && std::fabs(k.fEW) <= 1e-9 * k.fW)) return range;
  if (!(k.nE >= 0.0 && k.nEW >= 0.0 && k.nW >= 0.0 && k.nS >= 0.0)) return range;
  const Progression& widths = space.widths();
  if (widths.count() == 0 || shareds.count() == 0) return range;
  const SharedRangeInputs in{space.baseline_flops() * (1.0 - fbound),   space.baseline_flops() * (1.0 + fbound),
                             space.baseline_params() * (1.0 - nbound),  space.baseline_params() * (1.0 + nbound),
                             static_cast<double>(space.experts().min),  static_cast<double>(space.experts().max),
                             static_cast<double>(widths.first),         static_cast<double>(widths.last)};
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  if (space.tied_shared()) {
    tied_interval(k, in, lo, hi);
  } else {
    untied_interval(k, in, lo, hi);
  }
  if (std::isnan(lo) || std::isnan(hi)) return range;
  // Rounding: the coefficients are read off the op list in floating point (and F's E·W term is
  // zero only up to rounding); widen by 10⁻⁶ relative and one lattice step each side.
  const double step = static_cast<double>(shareds.step);
  if (std::isfinite(lo)) lo -= 1e-6 * std::max(1.0, std::fabs(lo)) + step;
  if (std::isfinite(hi)) hi += 1e-6 * std::max(1.0, std::fabs(hi)) + step;
  range.bounded = true;
  if (!(lo <= hi)) {
    range.end = range.begin;
    return range;
  }
  range.begin = shareds.index_not_below(std::ceil(lo));
  range.end = std::max(range.begin, shareds.index_above(std::floor(hi)));
  return range;
}

void set_shared_width_range_enabled(bool enabled) { shared_width_range_enabled.store(enabled); }

}  // namespace budget::match_detail
