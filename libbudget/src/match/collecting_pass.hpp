#pragma once
// Pass 2 of the matcher: every point within g* + tolerance that the ranking could report
// (docs/matching.md, "Ranking"), collected with bounded memory.

#include <vector>

#include "match/search_space.hpp"

namespace budget::match_detail {

/// The points with model objective <= `bound` that can be among the `top_n` ranked candidates,
/// in enumeration order. rank() keeps one representative per structure (its best-matched member)
/// and, only when fewer structures than top_n are eligible, the next best-matched points; so
/// each structure keeps its few best points by model order, and once more structures than
/// needed are known only those nearest the baseline's proportions survive (ties included).
/// Counts its work into `counters` (budget::Error "search space" over max_work).
std::vector<Point> collect_within(const SearchSpace& space, SearchCounters& counters, double bound, int top_n);

}  // namespace budget::match_detail
