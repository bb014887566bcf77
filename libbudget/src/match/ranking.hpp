#pragma once
// The matcher's ranking (docs/matching.md, "Objective and ranking") and the proportion distance it
// uses.

#include <cstdint>
#include <optional>
#include <vector>

#include "budget/config.hpp"
#include "budget/match.hpp"

namespace budget::match_detail {

/// Σ weight·|ln(candidate ratio / baseline ratio)| over expert (or dense) width / hidden, head
/// dim, query width / hidden and, where both have shared experts, shared width / hidden; plus
/// the kernel term kernel_head_dim_term() of the candidate's head dim; weights c.proportions.
double proportion_distance(const ArchConfig& candidate, const ArchConfig& baseline, const MatchConstraints& c);

/// The kernel term of a head dim hd (weight w = proportions.kernel_head_dim): with a kernel target
/// (MatchConstraints::kernels) 0 when the target runs (hd, hd) natively, w·(padded_head_dim_penalty
/// + ln(executed / hd)) when padded, w·2·padded_head_dim_penalty when refused (only searched with
/// --free-shapes); without one, w·ln(kernel_head_dim(hd) / hd) (FlashAttention-2's padding). 0 for
/// MLA baselines (their head dims are held: the term would be the same for every candidate).
double kernel_head_dim_term(std::int64_t head_dim, const ArchConfig& baseline, const MatchConstraints& c);

/// proportion_distance() of a candidate given by its numbers: head dim, query width, hidden size,
/// FFN width and shared width (0: no shared experts), against `baseline`.
double proportion_distance_of(std::int64_t head_dim, std::int64_t query_width, std::int64_t hidden,
                              std::int64_t ffn_width, std::int64_t shared_width, const ArchConfig& baseline,
                              const MatchConstraints& c);

/// The head-dim, kernel head-dim and query-width terms of proportion_distance() for a structure (a
/// lower bound of the distance of each of its points: the width terms are >= 0).
double structure_proportion_bound(std::int64_t head_dim, std::int64_t heads, std::int64_t hidden,
                                  const ArchConfig& baseline, const MatchConstraints& c);

/// What rank() returns: the rows and the tightest of the equally matched.
struct Ranking {
  std::vector<Candidate> rows;
  std::optional<Candidate> tightest;
};

/// Ranks exactly re-accounted, equally matched candidates and keeps the best `top_n`. A shape is
/// (depth, top_k, KV heads, head dim, heads, hidden, MLA latent); widths and expert counts
/// fine-tune the budgets of one shape.
/// MatchOrder::proportions (the default):
///  1. each shape is represented by its member nearest the baseline's proportions (then
///     better_match()): deviation differences among the equally matched do not decide;
///  2. the representatives by proportion distance, then better_match();
///  3. the other points after them in the same order (only when fewer shapes than top_n).
/// MatchOrder::tightest: each shape by its best-matched member (better_match()); row #1 the
/// representative first by first_row_before() over every shape; the others by proportion
/// distance, shown after it in shows_before() order; then the other points by better_match().
/// Either way `tightest` is the representative (best-matched member) first by
/// first_row_before() under tightest_order(). Stable: exact ties keep the input order (the
/// enumeration order).
Ranking rank(std::vector<Candidate> all, int top_n, const MatchConstraints& constraints);

/// The representative's order within a shape: (objective, second-largest, sum of |deviations|).
bool better_match(const Candidate& a, const Candidate& b);

/// The proportions order: (proportion distance, better_match()).
bool nearer_proportions(const Candidate& a, const Candidate& b);

/// The order the tightest (and row #1 under MatchOrder::tightest) is chosen by among the
/// representatives: shows_before(), then better_match().
bool first_row_before(const Candidate& a, const Candidate& b, RowOrder order);

/// Whether row `a` is shown before row `b` under `order` (RowOrder::predicted_time is not
/// decided here: it compares as shown_deviation; RowOrder::proportions as nearer_proportions()).
bool shows_before(const Candidate& a, const Candidate& b, RowOrder order);

}  // namespace budget::match_detail
