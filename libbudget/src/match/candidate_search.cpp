#include "match/candidate_search.hpp"

#include <algorithm>
#include <cmath>

#include "match/bound_pass.hpp"
#include "match/collecting_pass.hpp"
#include "match/equal_match.hpp"
#include "match/ranking.hpp"

namespace budget::match_detail {

CandidateSearch search_candidates(const SearchSpace& space, int top_n) {
  CandidateSearch out;
  const std::optional<Point> best_point = find_best_point(space, out.counters);
  if (!best_point) return out;
  const double best = best_point->objective;
  const MatchConstraints& c = space.constraints();
  out.equal_match = equal_match_bounds(space, out.counters, best);
  const std::vector<Point> points = collect_within(space, out.counters, out.equal_match, top_n);
  std::vector<Candidate> candidates;
  candidates.reserve(points.size());
  for (const Point& p : points) {
    candidates.push_back(
        evaluate_candidate(space.make_config(p), space.baseline(), space.baseline_budgets(), space.workload(), c));
  }
  // g*, accounted exactly at its point (which need not be equally matched).
  out.best_objective = evaluate_candidate(space.make_config(*best_point), space.baseline(), space.baseline_budgets(),
                                          space.workload(), c)
                           .objective;
  Ranking ranked = rank(std::move(candidates), top_n, c);
  out.candidates = std::move(ranked.rows);
  out.tightest = std::move(ranked.tightest);
  return out;
}

}  // namespace budget::match_detail
