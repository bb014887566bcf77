#pragma once
// Pass 2 of the matcher: every point within g* + tolerance that the ranking could report
// (docs/matching.md, "Ranking"), collected with bounded memory.

#include <vector>

#include "match/search_space.hpp"

namespace budget::match_detail {

/// The equally matched points (model objective <= bounds.objective and each weighted |deviation|
/// <= bounds.cap(e_b)) that can be among the `top_n` ranked candidates, in enumeration order, and
/// the tightest of them. rank() keeps one representative per structure (MatchOrder::proportions:
/// its member nearest the baseline's proportions; tightest: its best-matched member) and, only
/// when fewer structures than top_n are eligible, the next points in that order; so each
/// structure keeps its few first points in that order, and once more structures than needed are
/// known only those nearest the baseline's proportions survive (ties included). The tightest
/// (ranking.hpp) is tracked over every structure and collected whether or not its structure is.
/// Counts its work into `counters` (budget::Error "search space" over max_work).
std::vector<Point> collect_within(const SearchSpace& space, SearchCounters& counters, const EqualMatchBounds& bounds,
                                  int top_n);

}  // namespace budget::match_detail
