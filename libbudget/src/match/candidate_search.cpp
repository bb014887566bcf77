#include "match/candidate_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "match/bound_pass.hpp"
#include "match/collecting_pass.hpp"
#include "match/equal_match.hpp"
#include "match/ranking.hpp"

namespace budget::match_detail {

CandidateSearch search_candidates(const SearchSpace& space, int top_n) {
  CandidateSearch out;
  const double best = find_best_objective(space, out.counters);
  if (!std::isfinite(best)) return out;
  const MatchConstraints& c = space.constraints();
  out.equal_match = equal_match_bounds(space, out.counters, best);
  const std::vector<Point> points = collect_within(space, out.counters, out.equal_match, top_n);
  std::vector<Candidate> candidates;
  candidates.reserve(points.size());
  double best_exact = std::numeric_limits<double>::infinity();
  for (const Point& p : points) {
    candidates.push_back(
        evaluate_candidate(space.make_config(p), space.baseline(), space.baseline_budgets(), space.workload(), c));
    best_exact = std::min(best_exact, candidates.back().objective);
  }
  out.best_objective = best_exact;
  Ranking ranked = rank(std::move(candidates), top_n, c);
  out.candidates = std::move(ranked.rows);
  out.tightest = std::move(ranked.tightest);
  return out;
}

}  // namespace budget::match_detail
