#include "match/closed_form.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <array>
#include <utility>

#include "budget/ops.hpp"

namespace budget::match_detail {

Coefficients combine(const Coefficients& a, const Coefficients& b, double t) {
  Coefficients c;
  c.f0 = a.f0 + t * b.f0, c.fE = a.fE + t * b.fE, c.fW = a.fW + t * b.fW, c.fEW = a.fEW + t * b.fEW, c.fS = a.fS + t * b.fS;
  c.n0 = a.n0 + t * b.n0, c.nE = a.nE + t * b.nE, c.nW = a.nW + t * b.nW, c.nEW = a.nEW + t * b.nEW, c.nS = a.nS + t * b.nS;
  return c;
}

namespace {
/// F and N of `cfg` with (E, W, S) set; from the op list.
std::pair<double, double> budgets_at(const SearchSpace& space, ArchConfig cfg, std::int64_t E, std::int64_t W,
                                     std::int64_t S) {
  if (space.dense()) {
    cfg.ffn.dense_dim = W;
  } else {
    cfg.ffn.num_experts = E;
    cfg.ffn.expert_dim = W;
  }
  if (space.has_shared()) cfg.ffn.shared_expert_dim = S;
  const Budgets b = account(layer_ops(cfg, space.workload()), cfg, space.workload());
  return {matched_flops_per_token(b, space.workload(), space.constraints().count_lm_head), static_cast<double>(b.non_embedding_params_total)};
}

/// Interval of E where lo <= a + b·E <= hi (b >= 0), intersected into [e_lo, e_hi]. False if empty.
bool affine_interval(double a, double b, double lo, double hi, double& e_lo, double& e_hi) {
  if (b > 0) {
    e_lo = std::max(e_lo, (lo - a) / b);
    e_hi = std::min(e_hi, (hi - a) / b);
  } else if (a < lo || a > hi) {
    return false;
  }
  return e_lo <= e_hi;
}

/// At width W and shared width S: F(E) = aF + bF·E and N(E) = aN + bN·E, and their weighted relative
/// deviations from the baseline's F_b and N_b, u(E) = uA + uB·E and v(E) = vA + vB·E.
struct ExpertLines {
  double F_b, N_b, aF, bF, aN, bN, uA, uB, vA, vB;
};

ExpertLines expert_lines(const SearchSpace& space, const Coefficients& k, std::int64_t W, std::int64_t S) {
  const MatchConstraints& c = space.constraints();
  ExpertLines l{};
  l.F_b = space.baseline_flops();
  l.N_b = space.baseline_params();
  const double w = static_cast<double>(W), s = static_cast<double>(S);
  l.aF = k.f0 + k.fW * w + k.fS * s;
  l.bF = k.fE + k.fEW * w;
  l.aN = k.n0 + k.nW * w + k.nS * s;
  l.bN = k.nE + k.nEW * w;
  l.uA = c.weight_flops * (l.aF / l.F_b - 1.0);
  l.uB = c.weight_flops * l.bF / l.F_b;
  l.vA = c.weight_params * (l.aN / l.N_b - 1.0);
  l.vB = c.weight_params * l.bN / l.N_b;
  return l;
}

/// The point of [lo, hi] where `f` is lowest among lo and the points considered (a point outside
/// is skipped; a tie keeps the earlier): a convex piecewise-linear f's minimiser when every
/// breakpoint is considered.
template <class F>
class LowestPoint {
 public:
  LowestPoint(F f, double lo, double hi) : f_(std::move(f)), lo_(lo), hi_(hi), at_(lo), value_(f_(lo)) {}
  void consider(double x) {
    if (!(x >= lo_ && x <= hi_)) return;
    const double value = f_(x);
    if (value < value_) value_ = value, at_ = x;
  }
  double at() const { return at_; }

 private:
  F f_;
  double lo_, hi_, at_, value_;
};

/// Narrows [e_lo, e_hi] to the expert counts whose FLOPs and parameters deviate from the baseline's
/// by at most dF and dN (relative; an infinite one bounds nothing). False when none is left.
bool within_deviations(const ExpertLines& l, double dF, double dN, double& e_lo, double& e_hi) {
  if (std::isfinite(dF) && !affine_interval(l.aF, l.bF, l.F_b * (1 - dF), l.F_b * (1 + dF), e_lo, e_hi)) return false;
  if (std::isfinite(dN) && !affine_interval(l.aN, l.bN, l.N_b * (1 - dN), l.N_b * (1 + dN), e_lo, e_hi)) return false;
  return true;
}

/// The expert counts of the lattice (experts.min..max, multiples of experts.multiple_of) inside
/// [e_lo, e_hi] nearest below and above `best_e`; nullopt when the interval holds none.
std::optional<std::pair<std::int64_t, std::int64_t>> lattice_neighbours(const VariableRange& experts, double e_lo,
                                                                        double e_hi, double best_e) {
  const std::int64_t step = std::max<std::int64_t>(1, experts.multiple_of);
  const std::int64_t lattice_lo =
      ceil_to_multiple(std::max<std::int64_t>(experts.min, to_int64_clamped(std::ceil(e_lo - 1e-9))), step);
  const std::int64_t lattice_hi =
      floor_to_multiple(std::min<std::int64_t>(experts.max, to_int64_clamped(std::floor(e_hi + 1e-9))), step);
  if (lattice_lo > lattice_hi) return std::nullopt;
  const std::int64_t below = std::clamp(floor_to_multiple(to_int64_clamped(std::floor(best_e)), step), lattice_lo, lattice_hi);
  const std::int64_t above = std::clamp(ceil_to_multiple(to_int64_clamped(std::ceil(best_e)), step), lattice_lo, lattice_hi);
  return std::make_pair(below, above);
}
}  // namespace

Coefficients calibrate(const SearchSpace& space, const ArchConfig& cfg, std::int64_t top_k) {
  Coefficients k;
  const bool dense = space.dense(), shared = space.has_shared();
  const std::int64_t E1 = dense ? 0 : std::max<std::int64_t>(top_k, 1);
  const std::int64_t S1 = shared ? 1 : cfg.ffn.shared_expert_dim;
  const auto [F00, N00] = budgets_at(space, cfg, E1, 1, S1);
  const auto [F01, N01] = budgets_at(space, cfg, E1, 2, S1);
  const double dFW = F01 - F00, dNW = N01 - N00;
  if (dense) {
    k.fW = dFW;
    k.nW = dNW;
  } else {
    const auto [F10, N10] = budgets_at(space, cfg, E1 + 1, 1, S1);
    const auto [F11, N11] = budgets_at(space, cfg, E1 + 1, 2, S1);
    k.fEW = (F11 - F10) - dFW;
    k.nEW = (N11 - N10) - dNW;
    k.fE = (F10 - F00) - k.fEW * 1.0;
    k.nE = (N10 - N00) - k.nEW * 1.0;
    k.fW = dFW - k.fEW * static_cast<double>(E1);
    k.nW = dNW - k.nEW * static_cast<double>(E1);
  }
  if (shared) {
    const auto [FS, NS] = budgets_at(space, cfg, E1, 1, S1 + 1);
    k.fS = FS - F00;
    k.nS = NS - N00;
  }
  const double e1 = static_cast<double>(E1), s1 = static_cast<double>(S1);
  k.f0 = F00 - k.fE * e1 - k.fW - k.fEW * e1 - k.fS * s1;
  k.n0 = N00 - k.nE * e1 - k.nW - k.nEW * e1 - k.nS * s1;
  return k;
}

HeadsModel heads_model(const SearchSpace& space, SearchCounters& counters, const KvStructure& kv,
                       std::int64_t hidden, const Progression& heads) {
  HeadsModel m;
  if (heads.count() < 3) return m;
  const std::int64_t h0 = heads.at(0), h1 = heads.at(1), h2 = heads.at(heads.count() - 1);
  counters.count_work(3 * calibration_work, space.constraints().max_work);
  const Coefficients c0 = calibrate(space, space.structure_config(kv, hidden, h0), kv.top_k);
  const Coefficients c1 = calibrate(space, space.structure_config(kv, hidden, h1), kv.top_k);
  const Coefficients c2 = calibrate(space, space.structure_config(kv, hidden, h2), kv.top_k);
  const Coefficients slope = combine(c1, c0, -1.0);
  const double per_head = 1.0 / static_cast<double>(h1 - h0);
  m.slope = combine(Coefficients{}, slope, per_head);
  m.h0 = h0;
  m.at_h0 = c0;
  const Coefficients predicted = combine(c0, m.slope, static_cast<double>(h2 - h0));
  const auto close = [&](double x, double y, double scale) { return std::fabs(x - y) <= 1e-12 * scale; };
  const double f_scale = std::max(space.baseline_flops(), std::fabs(c2.f0));
  const double n_scale = std::max(space.baseline_params(), std::fabs(c2.n0));
  m.affine = close(predicted.f0, c2.f0, f_scale) && close(predicted.fE, c2.fE, f_scale) &&
             close(predicted.fW, c2.fW, f_scale) && close(predicted.fEW, c2.fEW, f_scale) &&
             close(predicted.fS, c2.fS, f_scale) && close(predicted.n0, c2.n0, n_scale) &&
             close(predicted.nE, c2.nE, n_scale) && close(predicted.nW, c2.nW, n_scale) &&
             close(predicted.nEW, c2.nEW, n_scale) && close(predicted.nS, c2.nS, n_scale);
  return m;
}

namespace {
CalibrationCache::Key cache_key(const SearchSpace& space, const KvStructure& kv, std::int64_t hidden) {
  return {static_cast<std::size_t>(&kv - space.kv_structures().data()), hidden};
}
}  // namespace

Coefficients cached_calibration(const SearchSpace& space, SearchCounters& counters, const KvStructure& kv,
                                std::int64_t hidden, std::int64_t heads) {
  CalibrationCache& cache = space.calibrations();
  const CalibrationCache::Key key = cache_key(space, kv, hidden);
  if (const auto it = cache.structures.find(key); it != cache.structures.end()) {
    counters.count_work(1, space.constraints().max_work);
    return it->second;
  }
  counters.count_work(calibration_work, space.constraints().max_work);
  const Coefficients k = calibrate(space, space.structure_config(kv, hidden, heads), kv.top_k);
  if (cache.structures.size() < CalibrationCache::max_entries) cache.structures.emplace(key, k);
  return k;
}

HeadsModel cached_heads_model(const SearchSpace& space, SearchCounters& counters, const KvStructure& kv,
                              std::int64_t hidden, const Progression& heads) {
  CalibrationCache& cache = space.calibrations();
  const CalibrationCache::Key key = cache_key(space, kv, hidden);
  if (const auto it = cache.heads_models.find(key); it != cache.heads_models.end()) {
    counters.count_work(1, space.constraints().max_work);
    return it->second;
  }
  const HeadsModel m = heads_model(space, counters, kv, hidden, heads);
  if (cache.heads_models.size() < CalibrationCache::max_entries) cache.heads_models.emplace(key, m);
  return m;
}

double flops_bound(const MatchConstraints& c, double pruning_bound) {
  double b = c.weight_flops > 0 ? (pruning_bound + slack) / c.weight_flops : std::numeric_limits<double>::infinity();
  if (c.max_flops_deviation) b = std::min(b, *c.max_flops_deviation);
  return b;
}

double params_bound(const MatchConstraints& c, double pruning_bound) {
  double b = c.weight_params > 0 ? (pruning_bound + slack) / c.weight_params : std::numeric_limits<double>::infinity();
  if (c.max_params_deviation) b = std::min(b, *c.max_params_deviation + slack);
  return b;
}

WidthBand flops_width_band(const SearchSpace& space, const Coefficients& k, std::int64_t S, double fbound) {
  const Progression& widths = space.widths();
  WidthBand band{0, widths.count(), false};
  // fEW is 0 up to float rounding (F has no E·W term); the bound assumes it.
  if (!(std::isfinite(fbound) && std::fabs(k.fEW) <= 1e-9 * k.fW && k.fW > 0.0)) return band;
  const double e_lo = static_cast<double>(space.dense() ? 0 : space.experts().min);
  const double e_hi = static_cast<double>(space.dense() ? 0 : space.experts().max);
  const double F_b = space.baseline_flops();
  const double rest = k.f0 + k.fS * static_cast<double>(S);
  const double w_max = (F_b * (1.0 + fbound) - rest - k.fE * e_lo) / k.fW;
  const double w_min = (F_b * (1.0 - fbound) - rest - k.fE * e_hi) / k.fW;
  band.begin = widths.index_not_below(std::ceil(w_min - 1e-9));
  band.end = widths.index_above(std::floor(w_max + 1e-9));
  band.bounded = true;
  return band;
}

/// A collectible point needs |dF| <= fbound and |dN| <= the params bound for its E. The F band
/// alone allows every E of the range, whose router FLOPs (fE·E) widen the W band ~10-fold; but
/// N = n0 + nS·S + nW·W + E·(nE + nEW·W) pins E for each W: over a W interval, E lies between
/// the extremes of g(W) = (N_target − n0 − nS·S − nW·W)/(nE + nEW·W), which is monotone in W
/// (the sign of g' does not depend on W), so at the interval's ends. E so bounded narrows the
/// W band of F in turn; three rounds reach the intersection. Necessary conditions only.
void narrow_by_params(const SearchSpace& space, const Coefficients& k, std::int64_t S, double fbound,
                      double pruning_bound, WidthBand& band) {
  const MatchConstraints& c = space.constraints();
  if (space.dense() || space.experts().is_fixed()) return;
  const double nbound = params_bound(c, pruning_bound);
  if (!std::isfinite(nbound)) return;
  const Progression& widths = space.widths();
  const double F_b = space.baseline_flops(), N_b = space.baseline_params();
  const double rest = k.f0 + k.fS * static_cast<double>(S);
  const double rest_n = k.n0 + k.nS * static_cast<double>(S);
  double e_lo = static_cast<double>(space.experts().min), e_hi = static_cast<double>(space.experts().max);
  double w_lo = static_cast<double>(widths.at(band.begin)), w_hi = static_cast<double>(widths.at(band.end - 1));
  for (int round = 0; round < 3; ++round) {
    const double slope_lo = k.nE + k.nEW * w_lo, slope_hi = k.nE + k.nEW * w_hi;
    if (!(slope_lo > 0.0 && slope_hi > 0.0)) return;
    const auto g = [&](double target, double w, double slope) { return (target - rest_n - k.nW * w) / slope; };
    const double n_lo = N_b * (1.0 - nbound), n_hi = N_b * (1.0 + nbound);
    const double e_min = std::min(g(n_lo, w_lo, slope_lo), g(n_lo, w_hi, slope_hi));
    const double e_max = std::max(g(n_hi, w_lo, slope_lo), g(n_hi, w_hi, slope_hi));
    e_lo = std::max(e_lo, e_min - 1e-6 * std::max(1.0, std::fabs(e_min)));
    e_hi = std::min(e_hi, e_max + 1e-6 * std::max(1.0, std::fabs(e_max)));
    if (e_lo > e_hi) {
      band.end = band.begin;
      return;
    }
    const double w_max = (F_b * (1.0 + fbound) - rest - k.fE * e_lo) / k.fW;
    const double w_min = (F_b * (1.0 - fbound) - rest - k.fE * e_hi) / k.fW;
    band.begin = std::max(band.begin, widths.index_not_below(std::ceil(w_min - 1e-9)));
    band.end = std::min(band.end, widths.index_above(std::floor(w_max + 1e-9)));
    if (band.begin >= band.end) return;
    w_lo = static_cast<double>(widths.at(band.begin));
    w_hi = static_cast<double>(widths.at(band.end - 1));
  }
}

std::optional<ExpertSolution> solve_experts(const SearchSpace& space, const Coefficients& k, std::int64_t W,
                                            std::int64_t S, double pruning_bound) {
  const MatchConstraints& c = space.constraints();
  const VariableRange& experts = space.experts();
  const ExpertLines l = expert_lines(space, k, W, S);
  const double aF = l.aF, bF = l.bF, aN = l.aN, bN = l.bN, uA = l.uA, uB = l.uB, vA = l.vA, vB = l.vB;
  const auto h = [&](double E) { return std::max(std::fabs(uA + uB * E), std::fabs(vA + vB * E)); };
  const auto at = [&](std::int64_t E, double h_value) {
    const double e = static_cast<double>(E);
    return ExpertSolution{E, aF + bF * e, aN + bN * e, h_value, h_value};
  };
  if (space.dense() || experts.is_fixed()) {
    const std::int64_t E = space.dense() ? 0 : experts.min;
    return at(E, h(static_cast<double>(E)));
  }
  // Interval of E allowed by the lattice range, the caps and the bound.
  double e_lo = static_cast<double>(experts.min), e_hi = static_cast<double>(experts.max);
  const double bound = pruning_bound + slack;
  const auto limit = [&](double weight, std::optional<double> cap) {
    double d = weight > 0 ? bound / weight : std::numeric_limits<double>::infinity();
    if (cap) d = std::min(d, *cap + slack);
    return d;
  };
  const double dF = limit(c.weight_flops, c.max_flops_deviation);
  const double dN = limit(c.weight_params, c.max_params_deviation);
  if (!within_deviations(l, dF, dN, e_lo, e_hi)) return std::nullopt;
  // Continuous minimiser of the convex h on [e_lo, e_hi]: among the breakpoints.
  LowestPoint lowest(h, e_lo, e_hi);
  lowest.consider(e_hi);
  if (uB != 0) lowest.consider(-uA / uB);
  if (vB != 0) lowest.consider(-vA / vB);
  if (uB != vB) lowest.consider((vA - uA) / (uB - vB));
  if (uB + vB != 0) lowest.consider(-(uA + vA) / (uB + vB));
  // Lattice neighbours of the minimiser inside [e_lo, e_hi].
  const auto neighbours = lattice_neighbours(experts, e_lo, e_hi, lowest.at());
  if (!neighbours) return std::nullopt;
  const auto [below, above] = *neighbours;
  const double h_below = h(static_cast<double>(below)), h_above = h(static_cast<double>(above));
  return at(h_above < h_below ? above : below, std::min(h_below, h_above));
}

}  // namespace budget::match_detail

namespace budget::match_detail {
namespace {

/// One affine piece α + β·E of a goal (ExpertTarget), in weighted relative-deviation units.
struct GoalPiece {
  double a, b;
};

/// The pieces whose maximum is the goal: ±u − offset for FLOPs, ±v − offset for parameters (at
/// most four; no allocation: the solve runs for every width visited).
struct GoalPieces {
  std::array<GoalPiece, 4> at{};
  std::size_t size = 0;
  void add(double a, double b) { at[size++] = {a, b}; }
};

GoalPieces goal_pieces(const ExpertTarget& t, double uA, double uB, double vA, double vB) {
  using Goal = ExpertTarget::Goal;
  GoalPieces pieces;
  const double fo = t.goal == Goal::excess ? t.flops_offset : 0.0;
  const double po = t.goal == Goal::excess ? t.params_offset : 0.0;
  if (t.goal != Goal::params) {
    pieces.add(uA - fo, uB);
    pieces.add(-uA - fo, -uB);
  }
  if (t.goal != Goal::flops) {
    pieces.add(vA - po, vB);
    pieces.add(-vA - po, -vB);
  }
  return pieces;
}

}  // namespace

std::optional<ExpertSolution> solve_experts(const SearchSpace& space, const Coefficients& k, std::int64_t W,
                                            std::int64_t S, const ExpertTarget& target) {
  if (target.goal == ExpertTarget::Goal::largest && target.flops == target.params) {
    return solve_experts(space, k, W, S, target.flops);
  }
  const MatchConstraints& c = space.constraints();
  const VariableRange& experts = space.experts();
  const ExpertLines l = expert_lines(space, k, W, S);
  const double F_b = l.F_b, N_b = l.N_b, aF = l.aF, bF = l.bF, aN = l.aN, bN = l.bN;
  const double uA = l.uA, uB = l.uB, vA = l.vA, vB = l.vB;
  const GoalPieces pieces = goal_pieces(target, uA, uB, vA, vB);
  const auto goal = [&](double E) {
    double g = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < pieces.size; ++i) g = std::max(g, pieces.at[i].a + pieces.at[i].b * E);
    return g;
  };
  const auto h = [&](double E) { return std::max(std::fabs(uA + uB * E), std::fabs(vA + vB * E)); };
  const auto at = [&](std::int64_t E) {
    const double e = static_cast<double>(E);
    return ExpertSolution{E, aF + bF * e, aN + bN * e, h(e), goal(e)};
  };
  if (space.dense() || experts.is_fixed()) {
    const ExpertSolution one = at(space.dense() ? 0 : experts.min);
    const double dF = c.weight_flops * std::fabs(one.flops / F_b - 1.0), dN = c.weight_params * std::fabs(one.params / N_b - 1.0);
    if (dF > target.flops + slack || dN > target.params + slack) return std::nullopt;
    if (c.max_flops_deviation && std::fabs(one.flops / F_b - 1.0) > *c.max_flops_deviation + slack) return std::nullopt;
    if (c.max_params_deviation && std::fabs(one.params / N_b - 1.0) > *c.max_params_deviation + slack) return std::nullopt;
    return one;
  }
  double e_lo = static_cast<double>(experts.min), e_hi = static_cast<double>(experts.max);
  const auto limit = [&](double weight, double bound, std::optional<double> cap) {
    double d = weight > 0 ? (bound + slack) / weight : std::numeric_limits<double>::infinity();
    if (cap) d = std::min(d, *cap + slack);
    return d;
  };
  const double dF = limit(c.weight_flops, target.flops, c.max_flops_deviation);
  const double dN = limit(c.weight_params, target.params, c.max_params_deviation);
  if (!within_deviations(l, dF, dN, e_lo, e_hi)) return std::nullopt;
  // Continuous minimiser of the convex goal on [e_lo, e_hi]: an end or a crossing of two pieces.
  LowestPoint lowest(goal, e_lo, e_hi);
  lowest.consider(e_hi);
  for (std::size_t i = 0; i < pieces.size; ++i) {
    for (std::size_t j = i + 1; j < pieces.size; ++j) {
      const GoalPiece &p = pieces.at[i], &q = pieces.at[j];
      if (p.b != q.b) lowest.consider((q.a - p.a) / (p.b - q.b));
    }
  }
  const auto neighbours = lattice_neighbours(experts, e_lo, e_hi, lowest.at());
  if (!neighbours) return std::nullopt;
  const ExpertSolution lo = at(neighbours->first), hi = at(neighbours->second);
  return hi.value < lo.value ? hi : lo;
}

}  // namespace budget::match_detail
