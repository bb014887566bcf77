#pragma once
// Pass 1 of the matcher: branch and bound for the smallest objective g* (docs/matching.md).

#include <optional>

#include "match/search_space.hpp"

namespace budget::match_detail {

/// The smallest model objective over the space (+inf when no point meets the caps). KV structures
/// are visited in order of increasing KV term, and every point of a structure has objective >= its
/// KV term, so once the incumbent is at or below that term the rest of the space is skipped (the
/// KV-dominated case of every looped match: g* is found by the first structure that reaches it).
/// Counts its work into `counters` (budget::Error "search space" over max_work).
double find_best_objective(const SearchSpace& space, SearchCounters& counters);
/// The point find_best_objective() found (nullopt when none meets the caps).
std::optional<Point> find_best_point(const SearchSpace& space, SearchCounters& counters);

}  // namespace budget::match_detail
