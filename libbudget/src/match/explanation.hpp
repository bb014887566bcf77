#pragma once
// Why a match binds or fails (docs/matching.md, "Which constraint binds" and "Infeasible
// requests"): each constraint relaxed alone, and the budgets that cannot be met, each answered by
// the candidate search below match() (search_candidates(), find_best_objective()), never by
// match() itself.

#include <functional>
#include <string>
#include <vector>

#include "budget/match.hpp"

namespace budget::match_detail {

/// A constraint that can be relaxed on its own, named as a user would write it.
struct Relaxation {
  std::string name;
  std::function<void(MatchConstraints&)> apply;
};

/// Every relaxation of `c`, one or two per search variable (search_variables() order: a fixed
/// variable freed to [1, max(8, 4·value)], a multiple_of dropped, a range widened to
/// [min(min, step), 4·max]), then the query width freed.
std::vector<Relaxation> relaxations(const MatchConstraints& c);

/// The best model objective under `c` by one branch-and-bound pass, and how that search ended.
struct RelaxedSearch {
  SearchStatus status = SearchStatus::infeasible;
  double objective = 0;       ///< +inf unless feasible
  std::string limit_message;  ///< over_search_limit: the limit's message
};
RelaxedSearch search_relaxed(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                             const MatchConstraints& c);

/// Fills summary.message, .infeasible and .uncapped_best for an infeasible request.
void explain_infeasibility(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                           const MatchConstraints& c, MatchSummary& summary);

}  // namespace budget::match_detail
