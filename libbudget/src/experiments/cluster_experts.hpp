#pragma once
// The expert count of a match ranked on a cluster (docs/matching.md, "Expert counts on a cluster"):
// the expert-parallel degree of the baseline's best layout on the cluster, kept in every candidate's
// expert count when that costs the match nothing.

#include <cstdint>
#include <string>

#include "budget/cluster.hpp"
#include "budget/layout_search.hpp"
#include "budget/match.hpp"
#include "budget/time_model.hpp"

namespace budget::experiments_detail {

struct ClusterExpertCount {
  /// The expert-parallel degree of the baseline's best layout on the cluster (0: not asked: a dense
  /// baseline, a fixed expert count, the whole lattice (ShapeSpace::free, whose counts may be off
  /// the baseline's parallel degrees by request), or no layout of the baseline, which the ranking
  /// reports).
  std::int64_t baseline_ep = 0;
  std::int64_t multiple = 0;  ///< the expert-count multiple searched (after)
  bool followed = false;      ///< raised to lcm(multiple, baseline_ep)
  /// The best objective (g*) without and with the baseline's EP kept (infinity: no match keeps it);
  /// both set when baseline_ep does not divide the multiple already.
  double objective = 0, objective_keeping_ep = 0;
  std::string note;  ///< one line for the match's notes (empty when baseline_ep is 0 or 1)
};

/// Before a cluster ranking: the baseline's best layout on `cluster` (search_layouts with `options`,
/// keeping one) and its EP degree e. When e does not divide the expert-count multiple of
/// `constraints`, the multiple becomes lcm(multiple, e) if the best objective with it is within
/// constraints.tolerance of the best without (so every candidate can run the baseline's EP at no
/// cost in the match); otherwise it stays, and the note says what keeping e would cost. Each
/// candidate is then ranked at its own best layout either way (rank_matched_on_cluster()).
/// budget::Error as search_layouts() and match().
ClusterExpertCount follow_baseline_expert_parallel(const ArchConfig& baseline, const LoopSpec& loop,
                                                   const Workload& workload, MatchConstraints& constraints,
                                                   const TimeModel& model, const ClusterSpec& cluster,
                                                   const LayoutSearchOptions& options);

}  // namespace budget::experiments_detail
