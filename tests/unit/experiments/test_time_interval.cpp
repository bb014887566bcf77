// Time shown with what it is worth (issue 17, item 6): the interval of a time ratio from the
// model's validation (by hand for the per-op propagation), the time ranking's equal band ordered
// by match quality, and the cap compared with the interval.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/grid.hpp"
#include "budget/time_model.hpp"
#include "budget/time_rank.hpp"
#include "time/shipped_profile.hpp"

using namespace budget;

namespace {

const CalibrationProfile& shipped() { return test::shipped_h200_profile(); }

/// The 200M S≈95% cell's constraints at a tolerance of 2% (several equally matched).
MatchConstraints several_equally_matched(const ArchConfig& baseline) {
  MatchConstraints constraints = default_constraints(baseline);
  constraints.tolerance = 0.02;
  return constraints;
}

/// Ranking by time with every candidate kept.
TimeRankOptions every_candidate_by_time() {
  TimeRankOptions exact;
  exact.rank_by = RankBy::time;
  exact.top_n = 100000;
  return exact;
}

/// The interval of a time ratio the layer rows give: ± 0.05.
TimeAccuracy layer_interval_of_5_percent() {
  TimeAccuracy a;
  a.from_layers = true;
  a.ratio_error = 0.05;
  return a;
}

}  // namespace

TEST_CASE("time interval: a ratio's ± by hand", "[time][interval]") {
  TimeAccuracy per_op;
  per_op.step_relative_error = 0.1;
  // r = 1.5, both step times ± 10%: [1.5·0.9/1.1, 1.5·1.1/0.9] = [1.2273, 1.8333]; the wider side
  // 1.8333 − 1.5 = 0.3333 = 1.5·0.2/0.9.
  CHECK(per_op.ratio_half_width(1.5) == Approx(1.5 * 1.1 / 0.9 - 1.5).epsilon(1e-12));
  CHECK(per_op.ratio_half_width(1.5) == Approx(1.0 / 3.0).epsilon(1e-12));
  CHECK(per_op.ratio_half_width(1.0) == Approx(0.2 / 0.9).epsilon(1e-12));
  TimeAccuracy layers;
  layers.from_layers = true;
  layers.ratio_error = 0.047;
  layers.step_relative_error = 0.058;
  CHECK(layers.ratio_half_width(1.0) == 0.047);
  CHECK(layers.ratio_half_width(1.7) == 0.047);  // an absolute interval on the ratio
}

TEST_CASE("time interval: the shipped profile's accuracy is its leave-one-cell-out validation", "[time][interval]") {
  const TimeAccuracy a = time_accuracy(shipped());
  const LayerValidation v = validate_layers_leave_one_cell_out(shipped());
  REQUIRE(a.from_layers);
  CHECK(a.ratio_error == v.max_ratio_error);
  CHECK(a.step_relative_error == v.max_layer_error);
  CHECK(a.validated == v.cells);
  CHECK(a.ratio_error > 0.0);
  CHECK(a.ratio_error < 0.1);
  CHECK(a.source.find("leave-one-cell-out") != std::string::npos);

  CalibrationProfile no_layers = shipped();
  no_layers.layers.clear();
  const TimeAccuracy b = time_accuracy(no_layers);
  CHECK_FALSE(b.from_layers);
  CHECK(b.step_relative_error == validate_time_model(no_layers).back().p90_relative_error);
  CHECK(b.source.find("per-op held-out") != std::string::npos);
}

TEST_CASE("time interval: ranking treats the band within ± of the fastest as equal, in the matcher's order",
          "[time][interval]") {
  const TimeModel model(shipped());
  const ArchConfig& baseline = paper_grid().cells[6].baseline;  // 200M, S≈95%
  const MatchConstraints constraints = several_equally_matched(baseline);
  const TimeRankOptions exact = every_candidate_by_time();
  const TimedMatch by_time = match_with_time(baseline, LoopSpec::smelt(), paper_workload(), constraints, model, exact);
  REQUIRE(by_time.within_tolerance > 3);

  TimeRankOptions banded = exact;
  banded.accuracy = layer_interval_of_5_percent();
  const TimedMatch m = match_with_time(baseline, LoopSpec::smelt(), paper_workload(), constraints, model, banded);
  // The reference band from the exact ranking: equally matched candidates with ratio ≤ fastest + 0.05.
  const double fastest = by_time.time_ratios.front();
  std::size_t band = 0;
  for (std::size_t i = 0; i < by_time.within_tolerance; ++i) band += by_time.time_ratios[i] <= fastest + 0.05 ? 1 : 0;
  REQUIRE(m.equal_within_interval == band);
  CHECK(m.fastest_ratio_half_width == 0.05);
  // The band first, in the matcher's order (nearest the proportions first): the deviations inside
  // the tolerance do not decide.
  const MatchResult matcher = match(baseline, LoopSpec::smelt(), paper_workload(), constraints, 100000);
  const auto position = [&](const Candidate& c) {
    for (std::size_t k = 0; k < matcher.candidates.size(); ++k) {
      if (matcher.candidates[k].config.hidden_size == c.config.hidden_size &&
          matcher.candidates[k].config.ffn.num_experts == c.config.ffn.num_experts &&
          matcher.candidates[k].config.ffn.expert_dim == c.config.ffn.expert_dim &&
          matcher.candidates[k].config.attention.head_dim == c.config.attention.head_dim &&
          matcher.candidates[k].config.attention.num_kv_heads == c.config.attention.num_kv_heads) {
        return k;
      }
    }
    FAIL("a timed candidate is not in the match");
    return std::size_t{0};
  };
  for (std::size_t i = 0; i < m.equal_within_interval; ++i) {
    CHECK(m.time_ratios[i] <= fastest + 0.05);
    if (i > 0) CHECK(position(m.result.candidates[i - 1]) < position(m.result.candidates[i]));
  }
  // Then the rest of the equally matched set, fastest first, as before.
  for (std::size_t i = m.equal_within_interval; i < m.within_tolerance; ++i) {
    CHECK(m.time_ratios[i] > fastest + 0.05);
    if (i > m.equal_within_interval) CHECK(m.time_ratios[i - 1] <= m.time_ratios[i]);
  }
}

TEST_CASE("time interval: --max-time-ratio drops only what exceeds the cap by more than the ±", "[time][interval]") {
  const TimeModel model(shipped());
  const ArchConfig& baseline = paper_grid().cells[6].baseline;
  const MatchConstraints constraints = several_equally_matched(baseline);
  const TimeRankOptions exact = every_candidate_by_time();
  const TimedMatch all = match_with_time(baseline, LoopSpec::smelt(), paper_workload(), constraints, model, exact);
  const double cap = all.time_ratios.front() + 0.01;
  std::size_t over_cap = 0, beyond_interval = 0;
  for (const double r : all.time_ratios) {
    over_cap += r > cap ? 1 : 0;
    beyond_interval += r - 0.05 > cap ? 1 : 0;
  }
  TimeRankOptions capped = exact;
  capped.max_time_ratio = cap;
  CHECK(match_with_time(baseline, LoopSpec::smelt(), paper_workload(), constraints, model, capped).dropped_by_cap ==
        over_cap);
  capped.accuracy = layer_interval_of_5_percent();
  const TimedMatch honest = match_with_time(baseline, LoopSpec::smelt(), paper_workload(), constraints, model, capped);
  CHECK(honest.dropped_by_cap == beyond_interval);
  CHECK(honest.above_cap_within_interval == over_cap - beyond_interval);
  for (const double r : honest.time_ratios) CHECK(r - 0.05 <= cap);
}
