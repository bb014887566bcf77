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
///  2. per shape (depth, top_k, KV heads, head dim, heads, hidden, MLA latent) keep the member with
///     the smallest (objective, second-largest deviation, sum of deviations) (better_match()):
///     widths and expert counts fine-tune the budgets of one shape, so the best-matched one
///     represents it;
///  3. row #1 is the representative first by first_row_before() over every shape, so that it is
///     the same whatever top_n (the best match the table could show);
///  4. the other representatives by distance from the baseline's proportions, then better_match();
///  5. the other eligible points after them, by better_match().
/// Row #1 is shown first, the other kept rows after it in `order` (shows_before()). Stable: exact
/// ties keep the input order (the enumeration order).
std::vector<Candidate> rank(std::vector<Candidate> all, int top_n, RowOrder order);

/// The representative's order within a shape: (objective, second-largest, sum of |deviations|).
bool better_match(const Candidate& a, const Candidate& b);

/// The order row #1 is chosen by among the representatives: shows_before(), then better_match().
bool first_row_before(const Candidate& a, const Candidate& b, RowOrder order);

/// Whether row `a` is shown before row `b` under `order` (RowOrder::predicted_time is not
/// decided here: it compares as shown_deviation).
bool shows_before(const Candidate& a, const Candidate& b, RowOrder order);

}  // namespace budget::match_detail
