// The expert count of a match ranked on a cluster (experiments/cluster_experts.hpp).

#include "experiments/cluster_experts.hpp"

#include <limits>
#include <numeric>

#include <fmt/format.h>

namespace budget::experiments_detail {

namespace {
/// g*, the best objective of `constraints`' space (infinity when no point meets its caps).
double best_objective_of(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                         const MatchConstraints& constraints) {
  const MatchResult r = match(baseline, loop, workload, constraints, 1);
  return r.summary.feasible ? r.summary.best_objective : std::numeric_limits<double>::infinity();
}
}  // namespace

ClusterExpertCount follow_baseline_expert_parallel(const ArchConfig& baseline, const LoopSpec& loop,
                                                   const Workload& workload, MatchConstraints& constraints,
                                                   const TimeModel& model, const ClusterSpec& cluster,
                                                   const LayoutSearchOptions& options) {
  ClusterExpertCount out;
  out.multiple = constraints.num_experts.multiple_of;
  // The whole lattice (--free-shapes) is asked for shapes off the baseline's parallel degrees too.
  if (!baseline.ffn.is_moe() || constraints.num_experts.is_fixed() || constraints.shapes == ShapeSpace::free) {
    return out;
  }
  LayoutSearchOptions one = options;
  one.keep = 1;
  one.count_fitting = false;
  one.report_progress = false;
  const LayoutSearchResult found = search_layouts(model, baseline, cluster, one);
  if (found.layouts.empty()) return out;  // the ranking says why
  const ParallelLayout& layout = found.layouts.front().memory.layout;
  out.baseline_ep = layout.ep;
  const std::int64_t e = layout.ep;
  if (e <= 1) return out;  // no expert parallelism to keep
  if (out.multiple % e == 0) {
    out.note = fmt::format("expert counts: multiples of {}, which the EP {} of the baseline's best layout on the "
                           "cluster divides",
                           out.multiple, e);
    return out;
  }
  MatchConstraints keeping = constraints;
  keeping.num_experts.multiple_of = std::lcm(out.multiple, e);
  out.objective = best_objective_of(baseline, loop, workload, constraints);
  out.objective_keeping_ep = keeping.num_experts.size() == 0
                                 ? std::numeric_limits<double>::infinity()
                                 : best_objective_of(baseline, loop, workload, keeping);
  const std::string cost = out.objective_keeping_ep == std::numeric_limits<double>::infinity()
                               ? std::string("no match keeps it")
                               : fmt::format("the best match keeping it is {:.2f}% against {:.2f}%",
                                             100 * out.objective_keeping_ep, 100 * out.objective);
  if (out.objective_keeping_ep <= out.objective + constraints.tolerance) {
    out.followed = true;
    out.note = fmt::format("expert counts: multiples of {} (not {}), so that every candidate can run the EP {} of the "
                           "baseline's best layout on the cluster: {} (within the tolerance)",
                           keeping.num_experts.multiple_of, out.multiple, e, cost);
    out.multiple = keeping.num_experts.multiple_of;
    constraints = keeping;
    return out;
  }
  out.note = fmt::format("expert counts: multiples of {}, which the EP {} of the baseline's best layout on the cluster "
                         "does not divide: multiples of {} would keep it, but {}; each candidate runs at its own best "
                         "layout, and is shown when a layout on the GPUs given fits it",
                         out.multiple, e, keeping.num_experts.multiple_of, cost);
  return out;
}

}  // namespace budget::experiments_detail
