#include "match/equal_match.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "match/structure_walk.hpp"

namespace budget::match_detail {
namespace {

constexpr double no_bound = std::numeric_limits<double>::infinity();

/// The hooks every pass here shares: points of P (objective and KV term <= bound), no structure
/// skipped for ranking, no pool.
class EqualMatchPassBase {
 public:
  explicit EqualMatchPassBase(double bound) : bound_(bound) {}
  double incumbent() const { return bound_; }
  bool cannot_rank(const KvStructure&, std::int64_t, std::int64_t) const { return false; }
  bool cannot_rank_widths(const KvStructure&, std::int64_t, std::int64_t, const Coefficients&) const { return false; }
  double pool_bound() const { return no_bound; }
  void begin_structure() {}
  void end_structure(bool) {}

 protected:
  double bound_;
};

/// e_F (Goal::flops) or e_N (Goal::params): the smallest weighted |deviation| of that budget over
/// P. The incumbent bounds that budget (only smaller values matter), P's bound the other.
class BestBudgetPass : public EqualMatchPassBase {
 public:
  BestBudgetPass(double bound, ExpertTarget::Goal goal, double weight)
      : EqualMatchPassBase(bound), goal_(goal), weight_(weight) {}
  bool cannot_improve(const KvStructure&) const { return best_ <= 0.0; }
  ExpertTarget target() const {
    const double own = std::min(best_, bound_);
    return goal_ == ExpertTarget::Goal::flops ? ExpertTarget{own, bound_, goal_, 0, 0}
                                              : ExpertTarget{bound_, own, goal_, 0, 0};
  }
  void consider(const KvStructure&, const Point&, double dF, double dN) {
    best_ = std::min(best_, weight_ * std::fabs(goal_ == ExpertTarget::Goal::flops ? dF : dN));
  }
  double best() const { return best_; }

 private:
  ExpertTarget::Goal goal_;
  double weight_;
  double best_ = no_bound;
};

/// e_KV: the smallest KV term of a structure holding a point of P. Structures come by KV term, so
/// the first one with a point gives it.
class BestKvPass : public EqualMatchPassBase {
 public:
  using EqualMatchPassBase::EqualMatchPassBase;
  bool cannot_improve(const KvStructure& kv) const { return kv.kv_term >= best_; }
  ExpertTarget target() const { return ExpertTarget::within(bound_); }
  void consider(const KvStructure& kv, const Point&, double, double) { best_ = std::min(best_, kv.kv_term); }
  double best() const { return best_; }

 private:
  double best_ = no_bound;
};

/// x*: the smallest excess max(t_F − e_F, t_N − e_N, t_KV − e_KV) over P. A point can beat the
/// incumbent x only with t_b < e_b + x for every b, so those bound the walk; structures come by KV
/// term, so once t_KV − e_KV >= x nothing later can.
class ExcessPass : public EqualMatchPassBase {
 public:
  ExcessPass(double bound, const EqualMatchBounds& e, const MatchConstraints& c)
      : EqualMatchPassBase(bound), e_(e), w_flops_(c.weight_flops), w_params_(c.weight_params) {}
  bool cannot_improve(const KvStructure& kv) const { return best_ <= 0.0 || kv.kv_term - e_.kv >= best_; }
  ExpertTarget target() const {
    return {std::min(bound_, e_.flops + best_), std::min(bound_, e_.params + best_), ExpertTarget::Goal::excess,
            e_.flops, e_.params};
  }
  void consider(const KvStructure& kv, const Point&, double dF, double dN) {
    best_ = std::min(best_, std::max({kv.kv_term - e_.kv, w_flops_ * std::fabs(dF) - e_.flops,
                                      w_params_ * std::fabs(dN) - e_.params}));
  }
  double best() const { return best_; }

 private:
  EqualMatchBounds e_;
  double w_flops_, w_params_;
  double best_ = no_bound;
};

}  // namespace

EqualMatchBounds equal_match_bounds(const SearchSpace& space, SearchCounters& counters, double best_objective) {
  const MatchConstraints& c = space.constraints();
  EqualMatchBounds e;
  e.tolerance = c.tolerance;
  e.objective = best_objective + c.tolerance;
  if (c.weight_flops > 0) {
    BestBudgetPass pass(e.objective, ExpertTarget::Goal::flops, c.weight_flops);
    StructureWalk<BestBudgetPass>(space, counters, pass).run();
    e.flops = pass.best();
  }
  if (c.weight_params > 0) {
    BestBudgetPass pass(e.objective, ExpertTarget::Goal::params, c.weight_params);
    StructureWalk<BestBudgetPass>(space, counters, pass).run();
    e.params = pass.best();
  }
  if (c.weight_kv > 0) {
    BestKvPass pass(e.objective);
    StructureWalk<BestKvPass>(space, counters, pass).run();
    e.kv = pass.best();
  }
  ExcessPass pass(e.objective, e, c);
  StructureWalk<ExcessPass>(space, counters, pass).run();
  e.excess = std::max(0.0, pass.best());
  return e;
}

}  // namespace budget::match_detail
