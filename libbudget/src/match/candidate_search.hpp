#pragma once
// The candidate search below match(): both passes over one search space, the exact
// re-accounting of what they collect, and the ranking. match() and the explanation of an
// infeasible request (explanation.hpp) both run it.

#include <optional>
#include <vector>

#include "budget/match.hpp"
#include "match/search_space.hpp"

namespace budget::match_detail {

struct CandidateSearch {
  std::vector<Candidate> candidates;  ///< ranked, at most top_n; empty when nothing is feasible
  std::optional<Candidate> tightest;  ///< the tightest of the equally matched (ranking.hpp)
  EqualMatchBounds equal_match;       ///< the bounds the equally matched were collected within
  /// g*, the smallest model objective of the space (pass 1); nullopt when pass 1 found nothing.
  std::optional<double> best_objective;
  SearchCounters counters;
};

/// Pass 1 finds the model optimum g*; then the bounds of the equally matched (equal_match.hpp);
/// pass 2 collects the equally matched points; each is re-accounted exactly with account()
/// (evaluate_candidate()) and the best `top_n` are ranked.
/// budget::Error (source "search space") when the search exceeds max_work.
CandidateSearch search_candidates(const SearchSpace& space, int top_n);

}  // namespace budget::match_detail
