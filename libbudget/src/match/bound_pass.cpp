#include "match/bound_pass.hpp"

#include <limits>
#include <optional>

#include "match/structure_walk.hpp"

namespace budget::match_detail {
namespace {

/// The hooks of StructureWalk for pass 1: the incumbent is the bound, nothing is collected.
class BoundPass {
 public:
  double incumbent() const { return best_; }
  bool cannot_improve(const KvStructure& kv) const { return kv.kv_term >= best_; }
  bool cannot_rank(const KvStructure&, std::int64_t, std::int64_t) const { return false; }
  bool cannot_rank_widths(const KvStructure&, std::int64_t, std::int64_t, const Coefficients&) const { return false; }
  ExpertTarget target() const { return ExpertTarget::within(best_); }
  double pool_bound() const { return std::numeric_limits<double>::infinity(); }
  void begin_structure() {}
  void end_structure(bool) {}
  void consider(const KvStructure&, const Point& p, double, double) {
    best_ = p.objective;
    best_point_ = p;
  }
  const std::optional<Point>& best_point() const { return best_point_; }

 private:
  double best_ = std::numeric_limits<double>::infinity();
  std::optional<Point> best_point_;
};

}  // namespace

double find_best_objective(const SearchSpace& space, SearchCounters& counters) {
  const std::optional<Point> best = find_best_point(space, counters);
  return best ? best->objective : std::numeric_limits<double>::infinity();
}

std::optional<Point> find_best_point(const SearchSpace& space, SearchCounters& counters) {
  BoundPass pass;
  StructureWalk<BoundPass>(space, counters, pass).run();
  return pass.best_point();
}

}  // namespace budget::match_detail
