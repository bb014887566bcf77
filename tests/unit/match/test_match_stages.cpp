// Tests of the matcher's stages (libbudget/src/match/): the search-variable table, the two passes
// against match(), constraint validation, and the search-limit status of --explain.

#include <algorithm>
#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "budget/error.hpp"
#include "budget/match.hpp"
#include "match/bound_pass.hpp"
#include "match/collecting_pass.hpp"
#include "match/equal_match.hpp"
#include "match/ranking.hpp"
#include "match/search_space.hpp"
#include "support/accounting_fixtures.hpp"

using namespace budget;

namespace {
const ConstraintSensitivity& find_relaxation(const std::vector<ConstraintSensitivity>& s, const std::string& name) {
  const auto it = std::find_if(s.begin(), s.end(), [&](const auto& x) { return x.constraint == name; });
  REQUIRE(it != s.end());
  return *it;
}
}  // namespace

TEST_CASE("every search variable of the table is read from a constraints file under its name", "[match]") {
  const MatchConstraints d = default_constraints(test::paper_200m_baseline());
  std::int64_t value = 3;
  for (const auto& v : match_detail::search_variables()) {
    ++value;
    const std::string text = std::string("{\"") + v.name + "\": {\"fixed\": " + std::to_string(value) + "}}";
    const MatchConstraints c = parse_constraints(text, "c.json", d);
    INFO(v.name);
    CHECK((c.*v.range).is_fixed());
    CHECK((c.*v.range).min == value);
  }
  // Ten variables, each once.
  CHECK(match_detail::search_variables().size() == 10);
}

TEST_CASE("the space size is the product of the variables in the space", "[match]") {
  const ArchConfig b = test::paper_200m_baseline();
  const MatchConstraints c = default_constraints(b, ShapeSpace::free);
  const Workload workload = paper_workload();  // the space keeps references: no temporaries
  const LoopSpec loop = LoopSpec::smelt();
  const match_detail::SearchSpace space(b, loop, workload, c);
  // Query width tied to hidden (num_heads not a variable), GQA (no KV latent): by hand from the
  // free defaults: hidden [320, 2560]/8, head dim [32, 256]/4, experts [8, 1536]/8, width [8, 1728]/8.
  const std::int64_t by_hand = ((2560 - 320) / 8 + 1) * ((256 - 32) / 4 + 1) * ((1536 - 8) / 8 + 1) * ((1728 - 8) / 8 + 1);
  CHECK(space.space_size() == by_hand);
  CHECK(space.space_size() == match(b, LoopSpec::smelt(), paper_workload(), c, 1).summary.space_size);
  // The trainable defaults: head dim [32, 256]/8, KV heads 1 or 2, experts multiples of 32 in
  // [32, 1536] (192 = 64·3: 32 is the largest power of two at most 192/4 dividing it).
  const MatchConstraints t = default_constraints(b);
  const match_detail::SearchSpace trainable(b, loop, workload, t);
  const std::int64_t trainable_by_hand =
      ((2560 - 320) / 8 + 1) * ((256 - 32) / 8 + 1) * 2 * ((1536 - 32) / 32 + 1) * ((1728 - 8) / 8 + 1);
  CHECK(trainable.space_size() == trainable_by_hand);
}

TEST_CASE("the bound pass finds the optimum and the collecting pass stays within its bound", "[match]") {
  const ArchConfig b = test::paper_200m_baseline();
  const MatchConstraints c = default_constraints(b);
  const Workload workload = paper_workload();  // the space keeps references: no temporaries
  const LoopSpec loop = LoopSpec::smelt();
  const match_detail::SearchSpace space(b, loop, workload, c);
  match_detail::SearchCounters counters;
  const double best = match_detail::find_best_objective(space, counters);
  const MatchResult r = match(b, LoopSpec::smelt(), paper_workload(), c, 5);
  // The model optimum and the exact objective of the best re-accounted candidate agree to rounding.
  CHECK(best == Approx(r.summary.best_objective).margin(1e-12));
  const EqualMatchBounds bounds = match_detail::equal_match_bounds(space, counters, best);
  CHECK(bounds.objective == best + c.tolerance);
  const auto points = match_detail::collect_within(space, counters, bounds, 5);
  REQUIRE_FALSE(points.empty());
  for (const auto& p : points) {
    CHECK(p.objective <= bounds.objective + match_detail::slack);
    // Each budget within its cap of the equally matched (model values; unit weights).
    const Candidate x = evaluate_candidate(space.make_config(p), b, space.baseline_budgets(), workload, c);
    CHECK(std::fabs(x.deviation.flops) <= bounds.cap(bounds.flops) + 1e-9);
    CHECK(std::fabs(x.deviation.params) <= bounds.cap(bounds.params) + 1e-9);
    CHECK(std::fabs(x.deviation.kv) <= bounds.cap(bounds.kv) + 1e-9);
  }
  CHECK(std::is_sorted(points.begin(), points.end(), match_detail::enumeration_order));
  // Both passes counted into the same counters, as match() reports them.
  CHECK(counters.structures == r.summary.structures);
  CHECK(counters.evaluated == r.summary.evaluated);
}

TEST_CASE("validation_error() names the field, the value and what is allowed, validate() throws it", "[match]") {
  const MatchConstraints valid = default_constraints(test::paper_200m_baseline());
  CHECK(validation_error(valid).empty());
  CHECK_NOTHROW(validate(valid));
  const auto check = [](MatchConstraints c, const std::string& path, const std::string& text) {
    const std::string message = validation_error(c);
    INFO(message);
    CHECK_THAT(message, Catch::StartsWith(path + ": "));
    CHECK_THAT(message, Catch::Contains(text));
    try {
      validate(c);
      FAIL("validate() did not throw");
    } catch (const Error& e) {
      CHECK(e.path() == path);
      CHECK(std::string(e.what()) == message);
    }
  };
  MatchConstraints c = valid;
  c.head_dim.multiple_of = 0;
  check(c, "/head_dim/multiple_of", "multiple_of 0 is out of range; allowed: an integer >= 1");
  c = valid;
  c.hidden_size = {100, 50, 8};
  check(c, "/hidden_size", "range [100, 50] is empty");
  c = valid;
  c.expert_dim = {801, 807, 8};
  check(c, "/expert_dim", "holds no multiple of 8");
  c = valid;
  c.num_layers = VariableRange::fixed(0);
  check(c, "/num_layers", "below 1");
  c = valid;
  c.weight_kv = -1;
  check(c, "/weights/kv", "weight -1 must be a finite number >= 0");
  c = valid;
  c.weight_flops = c.weight_params = c.weight_kv = 0;
  check(c, "/weights", "at least one weight must be positive");
  c = valid;
  c.max_params_deviation = std::numeric_limits<double>::quiet_NaN();
  check(c, "/max_deviation/params", "allowed: a finite number >= 0");
  c = valid;
  c.tolerance = 1.0;
  check(c, "/tolerance", "tolerance 1 must be in [0, 1)");
  c = valid;
  c.max_work = 0;
  check(c, "/max_work", "max_work 0 must be at least 1");
}

TEST_CASE("a relaxation over the search limit is reported as not searched, never as infeasible", "[match]") {
  // The 200M cell on the whole lattice passes a limit of 3000 structures (57 head dims), but
  // freeing the depth ([1, 48]: 48·57 KV structures) or the KV heads exceeds max_structures / 10
  // = 300: those relaxations are refused by the limits. Before, they were reported as "infeasible".
  const ArchConfig b = test::paper_200m_baseline();
  MatchConstraints c = default_constraints(b, ShapeSpace::free);
  c.max_structures = 3000;
  const auto s = constraint_sensitivity(b, LoopSpec::smelt(), paper_workload(), c);
  for (const char* name : {"num_layers fixed at 12", "num_kv_heads fixed at 2"}) {
    const ConstraintSensitivity& x = find_relaxation(s, name);
    INFO(name);
    CHECK(x.status == SearchStatus::over_search_limit);
    CHECK_THAT(x.limit_message, Catch::Contains("--max-structures"));
    CHECK(std::isinf(x.relaxed_objective));
  }
  // Within the default limits the same relaxation is searched: one KV head of 172, +0.78125%.
  const auto wide =
      constraint_sensitivity(b, LoopSpec::smelt(), paper_workload(), default_constraints(b, ShapeSpace::free));
  const ConstraintSensitivity& kv_heads = find_relaxation(wide, "num_kv_heads fixed at 2");
  CHECK(kv_heads.status == SearchStatus::feasible);
  CHECK(kv_heads.relaxed_objective == Approx(0.0078125).margin(1e-12));
  for (const auto& x : s) {
    if (x.status == SearchStatus::feasible) CHECK(std::isfinite(x.relaxed_objective));
  }
  CHECK(to_string(SearchStatus::over_search_limit) == "over_search_limit");
}

TEST_CASE("infeasible is reported only when a relaxed search proves it", "[match]") {
  // A KV cap of 0.5% that no single relaxation within the limits meets except those named.
  const ArchConfig b = test::paper_200m_baseline();
  MatchConstraints c = default_constraints(b);
  c.max_kv_deviation = 0.0001;
  c.num_layers = VariableRange::fixed(12);
  const auto s = constraint_sensitivity(b, LoopSpec::smelt(), paper_workload(), c);
  bool any_infeasible = false;
  for (const auto& x : s) {
    INFO(x.constraint);
    CHECK(x.status != SearchStatus::over_search_limit);
    if (x.status == SearchStatus::infeasible) {
      any_infeasible = true;
      CHECK(std::isinf(x.relaxed_objective));
    }
  }
  // hidden_size relaxed keeps head_dim·kv_heads·2·18 away from 6144 ± 0.01%: still infeasible.
  CHECK(any_infeasible);
  CHECK(find_relaxation(s, "hidden_size multiple of 8").status == SearchStatus::infeasible);
}

TEST_CASE("infeasibility reasons name the relaxations the limits refused", "[match]") {
  const ArchConfig b = test::paper_200m_baseline();
  MatchConstraints c = default_constraints(b, ShapeSpace::free);
  c.max_kv_deviation = 0.005;
  c.max_structures = 3000;
  const MatchResult r = match(b, LoopSpec::smelt(), paper_workload(), c, 1);
  REQUIRE_FALSE(r.summary.feasible);
  CHECK_THAT(r.summary.message, Catch::Contains("binding constraint(s): head_dim multiple of 4"));
  CHECK_THAT(r.summary.message, Catch::Contains("not searched (over the search limit"));
  CHECK_THAT(r.summary.message, Catch::Contains("num_layers fixed at 12"));
}

namespace {
/// A candidate of its own structure (hidden size `hidden`) with the given deviations; objectives
/// from unit weights (the largest, second and third |deviation|).
Candidate ranked_candidate(std::int64_t hidden, double flops, double params, double kv, double distance) {
  Candidate c;
  c.config = test::paper_200m_baseline();
  c.config.hidden_size = hidden;
  c.deviation = {flops, params, kv};
  std::vector<double> w{std::fabs(flops), std::fabs(params), std::fabs(kv)};
  std::sort(w.rbegin(), w.rend());
  c.objective = w[0];
  c.second_objective = w[1];
  c.third_objective = w[2];
  c.proportion_distance = distance;
  return c;
}

std::vector<std::int64_t> hiddens(const std::vector<Candidate>& rows) {
  std::vector<std::int64_t> out;
  for (const auto& c : rows) out.push_back(c.config.hidden_size);
  return out;
}

/// Constraints asking for `order`, with weight_kv `kv` (1: unit weights).
MatchConstraints ordered(MatchOrder order, double kv = 1.0) {
  MatchConstraints c;
  c.order = order;
  c.weight_kv = kv;
  return c;
}

/// rank()'s rows under `order` (`kv`: weight_kv).
std::vector<Candidate> rows_of(const std::vector<Candidate>& all, int top, MatchOrder order, double kv = 1.0) {
  return match_detail::rank(all, top, ordered(order, kv)).rows;
}
}  // namespace

TEST_CASE("rank() keeps the nearest shapes and shows them best-first by the deviation shown", "[match]") {
  // By hand, |deviations| in hundredths of a percent, largest first:
  //   A 198, 10, 0 (distance 0.1)   B 179, 100, 0 (0.2)   C 179, 50, 0 (0.3)
  //   D 179, 50, 10 (0.05)          E 179, 50, 0 (0.01; 1.791% and 0.501% round as C's)
  // Shown order: E (ties C, nearer), C, D (third 0.10%), B (second 1.00%), A (largest 1.98%).
  const std::vector<Candidate> all{
      ranked_candidate(1001, 0.0198, -0.001, 0.0, 0.1), ranked_candidate(1002, 0.0179, 0.010, 0.0, 0.2),
      ranked_candidate(1003, -0.0179, 0.005, 0.0, 0.3), ranked_candidate(1004, 0.0179, -0.005, 0.001, 0.05),
      ranked_candidate(1005, 0.01791, 0.00501, 0.0, 0.01)};
  CHECK(hiddens(rows_of(all, 5, MatchOrder::tightest)) ==
        std::vector<std::int64_t>{1005, 1003, 1004, 1002, 1001});
  // Which rows are kept does not change: top 3 = the three nearest shapes (E, D, A), then shown order.
  CHECK(hiddens(rows_of(all, 3, MatchOrder::tightest)) == std::vector<std::int64_t>{1005, 1004, 1001});
  // One representative per structure: a second member of E's structure that is better matched
  // replaces it; a worse one does not show while other shapes fill the rows.
  std::vector<Candidate> with_members = all;
  with_members.push_back(ranked_candidate(1005, 0.0150, 0.001, 0.0, 0.02));
  with_members.push_back(ranked_candidate(1001, 0.0300, 0.001, 0.0, 0.0));
  const auto rows = rows_of(with_members, 5, MatchOrder::tightest);
  CHECK(hiddens(rows) == std::vector<std::int64_t>{1005, 1003, 1004, 1002, 1001});
  CHECK(rows.front().deviation.flops == 0.0150);
  CHECK(rows.back().deviation.flops == 0.0198);
}

TEST_CASE("rank() by proportions: each shape's nearest member, nearest first, the tightest apart", "[match]") {
  // The same five shapes as above: by distance E (0.01), D (0.05), A (0.1), B (0.2), C (0.3),
  // whatever their deviations; the tightest is E (the shown order's first).
  const std::vector<Candidate> all{
      ranked_candidate(1001, 0.0198, -0.001, 0.0, 0.1), ranked_candidate(1002, 0.0179, 0.010, 0.0, 0.2),
      ranked_candidate(1003, -0.0179, 0.005, 0.0, 0.3), ranked_candidate(1004, 0.0179, -0.005, 0.001, 0.05),
      ranked_candidate(1005, 0.01791, 0.00501, 0.0, 0.01)};
  CHECK(hiddens(rows_of(all, 5, MatchOrder::proportions)) == std::vector<std::int64_t>{1005, 1004, 1001, 1002, 1003});
  // A member of C's shape nearer the proportions than any shape represents C and leads; a
  // better-matched member of A's shape that is farther does not replace A's nearer one.
  std::vector<Candidate> with_members = all;
  with_members.push_back(ranked_candidate(1003, 0.0190, 0.0, 0.0, 0.001));
  with_members.push_back(ranked_candidate(1001, 0.0010, 0.0, 0.0, 0.5));
  const match_detail::Ranking r = match_detail::rank(with_members, 3, ordered(MatchOrder::proportions));
  CHECK(hiddens(r.rows) == std::vector<std::int64_t>{1003, 1005, 1004});
  CHECK(r.rows.front().proportion_distance == 0.001);
  // The tightest: each shape's best-matched member, then the shown order: A's 0.10% member.
  REQUIRE(r.tightest.has_value());
  CHECK(r.tightest->config.hidden_size == 1001);
  CHECK(r.tightest->deviation.flops == 0.0010);
  // With fewer shapes than rows, the other members follow, nearest first.
  const auto more = rows_of(with_members, 7, MatchOrder::proportions);
  REQUIRE(more.size() == 7);
  CHECK(more[4].proportion_distance == 0.2);  // B: the last representative
  CHECK(more[5].proportion_distance == 0.3);  // C's other member (its 0.001 one represents it)
  CHECK(more[6].proportion_distance == 0.5);  // A's other member, better matched but farther
}

TEST_CASE("rank() orders by the weighted objective when the weights are not all 1", "[match]") {
  // Weighted objectives set apart from the deviations (as weights would): X shows the smaller
  // deviation but has the larger weighted objective.
  Candidate x = ranked_candidate(1001, 0.010, 0.0, 0.0, 0.1);
  Candidate y = ranked_candidate(1002, 0.020, 0.0, 0.0, 0.2);
  x.objective = 0.010;
  y.objective = 0.005;
  CHECK(hiddens(rows_of({x, y}, 2, MatchOrder::tightest, 0.5)) == std::vector<std::int64_t>{1002, 1001});
  CHECK(hiddens(rows_of({x, y}, 2, MatchOrder::tightest)) == std::vector<std::int64_t>{1001, 1002});
  // Ties on the objective fall to the second, then the third weighted term, then the distance.
  Candidate z = y;
  z.config.hidden_size = 1003;
  z.second_objective = 0.001;
  Candidate u = y;
  u.config.hidden_size = 1004;
  u.third_objective = 0.0001;
  u.proportion_distance = 0.0;
  CHECK(hiddens(rows_of({z, u, y}, 3, MatchOrder::tightest, 0.5)) ==
        std::vector<std::int64_t>{1002, 1004, 1003});
  MatchConstraints c;
  CHECK(row_order(c) == RowOrder::proportions);
  c.order = MatchOrder::tightest;
  CHECK(row_order(c) == RowOrder::shown_deviation);
  c.weight_kv = 0.5;
  CHECK(row_order(c) == RowOrder::weighted_objective);
  CHECK(tightest_order(c) == RowOrder::weighted_objective);
  CHECK(to_string(RowOrder::proportions) == "proportions");
  CHECK(to_string(RowOrder::shown_deviation) == "shown_deviation");
  CHECK(to_string(RowOrder::weighted_objective) == "weighted_objective");
  CHECK(to_string(RowOrder::predicted_time) == "predicted_time");
  CHECK(to_string(RowOrder::predicted_time_within_accuracy) == "predicted_time_within_accuracy");
}
