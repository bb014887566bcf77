#pragma once
// The bounds of the equally matched set (docs/matching.md, "Equally matched"; EqualMatchBounds in
// budget/match.hpp): the smallest weighted |deviation| of each budget among the points within
// g* + tolerance, and the smallest excess over them, each by a branch and bound over the space.

#include "budget/match.hpp"
#include "match/search_space.hpp"

namespace budget::match_detail {

/// EqualMatchBounds for `space` whose model optimum is `best_objective` (g*, finite): e_F and e_N
/// by one pass each (minimising w_F·|dF|, resp. w_N·|dN|, over P = objective <= g* + τ), e_KV by a
/// pass that stops at the first KV structure (by KV term) holding a point of P, then x* by a pass
/// minimising the excess max_b (t_b − e_b) over P. A budget of weight 0 has e_b = 0 (t_b is 0).
/// Counts its work into `counters` (budget::Error "search space" over max_work).
EqualMatchBounds equal_match_bounds(const SearchSpace& space, SearchCounters& counters, double best_objective);

}  // namespace budget::match_detail
