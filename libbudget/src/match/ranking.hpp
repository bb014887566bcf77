#pragma once
// The matcher's ranking (docs/matching.md, "Ranking") and the proportion distance it uses.

#include <cstdint>
#include <vector>

#include "budget/config.hpp"
#include "budget/match.hpp"

namespace budget::match_detail {

/// Σ weight·|ln(candidate ratio / baseline ratio)| over expert (or dense) width / hidden, head
/// dim, query width / hidden and, where both have shared experts, shared width / hidden.
double proportion_distance(const ArchConfig& candidate, const ArchConfig& baseline, const ProportionWeights& w);

/// The head-dim and query-width terms of proportion_distance() for a structure (a lower bound
/// of the distance of each of its points: the width terms are >= 0).
double structure_proportion_bound(std::int64_t head_dim, std::int64_t heads, std::int64_t hidden,
                                  const ArchConfig& baseline, const ProportionWeights& w);

/// Ranks exactly re-accounted candidates and keeps the best `top_n`. Which are kept:
///  1. eligible = objective <= g* + tolerance (the collecting pass collected exactly those);
///  2. per structure (depth, top_k, KV heads, head dim, heads, hidden) keep the member with the
///     smallest (objective, second-largest deviation, sum of deviations): widths and expert
///     counts fine-tune the budgets of one shape, so the best-matched one represents it;
///  3. representatives by distance from the baseline's proportions, then objective;
///  4. the other eligible points after them, by (objective, second-largest deviation).
/// The kept rows are then shown in `order` (shows_before()). Stable: exact ties keep the input
/// order (the enumeration order).
std::vector<Candidate> rank(std::vector<Candidate> all, int top_n, RowOrder order);

/// Whether row `a` is shown before row `b` under `order` (RowOrder::predicted_time is not
/// decided here: it compares as shown_deviation).
bool shows_before(const Candidate& a, const Candidate& b, RowOrder order);

}  // namespace budget::match_detail
