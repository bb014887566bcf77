// Matching hybrid stacks (docs/matching.md, "Hybrid stacks"): the loop spans whole periods of the
// layer pattern, the output says which layer kinds it re-runs, the recurrent state is reported and
// held when asked (the fourth budget).

#include <string>

#include <catch2/catch.hpp>

#include "budget/config_io.hpp"
#include "budget/match.hpp"

using namespace budget;

namespace {
const std::string hf_data = std::string(BUDGET_TEST_DATA_DIR) + "/hf/";

LoopSpec centred(std::int64_t period) {
  LoopSpec l;
  l.period = period;
  return l;
}
}  // namespace

TEST_CASE("hybrid match: the pattern period of released stacks", "[match][hybrid]") {
  CHECK(load_arch_config(hf_data + "gpt-oss-120b.json").layer_pattern_period() == 2);         // sliding, full
  CHECK(load_arch_config(hf_data + "qwen3-next-80b-a3b-thinking.json").layer_pattern_period() == 4);  // 3 linear : 1 full
  CHECK(load_arch_config(hf_data + "llama-4-scout-17b-16e-instruct.json").layer_pattern_period() == 4);
  CHECK(load_arch_config(hf_data + "llama-4-maverick-17b-128e-instruct.json").layer_pattern_period() == 4);
  CHECK(load_arch_config(hf_data + "nemotron-3-nano-30b-a3b.json").layer_pattern_period() == 0);  // no repeat
  CHECK(load_arch_config(hf_data + "qwen3-30b-a3b.json").layer_pattern_period() == 1);
}

TEST_CASE("hybrid match: a centred loop spans whole periods, balanced in the stack", "[match][hybrid]") {
  // 48 layers, period 4, half: 6 periods from layer 13 (12 layers before, 12 after).
  CHECK(centred(4).resolve(48)->first == 13);
  CHECK(centred(4).resolve(48)->last == 36);
  // 36 layers, period 2: 9 periods; 18 free layers, starts at 9 or 11 balance equally: the earlier.
  CHECK(centred(2).resolve(36)->first == 9);
  CHECK(centred(2).resolve(36)->last == 26);
  // 10 layers, period 4: round(5/4) = 1 period; starts at 5 (4 before, 2 after) rather than 1.
  CHECK(centred(4).resolve(10)->first == 5);
  CHECK(centred(4).resolve(10)->last == 8);
  // Period 1 is the centred loop of centred_loop(); an explicit range is kept as given.
  CHECK(centred(1).resolve(12)->first == 4);
  LoopSpec explicit_range;
  explicit_range.first = 2;
  explicit_range.last = 3;
  explicit_range.period = 4;
  CHECK(explicit_range.resolve(12)->first == 2);
  // The baseline's period fills in 0.
  CHECK(LoopSpec{}.for_baseline(load_arch_config(hf_data + "gpt-oss-20b.json")).period == 2);
  LoopSpec bad;
  bad.period = -1;
  CHECK_THAT(bad.validation_error(), Catch::Contains("period = -1"));
}

TEST_CASE("hybrid match: Qwen3-Next is matched with a loop of whole 3:1 periods", "[match][hybrid]") {
  const ArchConfig base = load_arch_config(hf_data + "qwen3-next-80b-a3b-thinking.json");
  const MatchResult r = match(base, LoopSpec{}, paper_workload(), default_constraints(base), 2);
  REQUIRE(r.summary.feasible);
  for (const Candidate& c : r.candidates) {
    CHECK(c.config.layer_mixers == base.layer_mixers);
    REQUIRE(c.config.loop);
    CHECK(c.config.loop->first == 13);
    CHECK(c.config.loop->last == 36);
    // The loop re-runs 18 of the 36 DeltaNet layers: their state +50%, reported, not matched.
    CHECK(c.deviation.state == Approx(0.5));
    CHECK(c.deviation.max_abs() < 0.02);
  }
  bool said = false;
  for (const auto& note : r.summary.notes) {
    said = said || (note.find("6 whole periods of the 4-layer pattern") != std::string::npos &&
                    note.find("18 linear_attention + moe, 6 attention (full) + moe") != std::string::npos);
  }
  CHECK(said);
  // Held as a fourth budget: a cap of 10% refuses the loop, naming the state.
  MatchConstraints capped = default_constraints(base);
  capped.max_state_deviation = 0.1;
  capped.max_structures = 200'000;
  const MatchResult refused = match(base, LoopSpec{}, paper_workload(), capped, 1);
  CHECK_FALSE(refused.summary.feasible);
  REQUIRE_FALSE(refused.summary.infeasible.empty());
  CHECK(refused.summary.infeasible.front().budget == "state");
  CHECK(refused.summary.infeasible.front().best_attainable == Approx(0.5));
}

TEST_CASE("hybrid match: without a repeating pattern the loop goes layer by layer and says so", "[match][hybrid]") {
  const ArchConfig base = load_arch_config(hf_data + "nemotron-3-nano-30b-a3b.json");
  const MatchResult r = match(base, LoopSpec{}, paper_workload(), default_constraints(base), 1);
  REQUIRE(r.summary.feasible);
  const Candidate& c = r.candidates.front();
  CHECK(c.config.loop->first == 14);  // centred_loop(52, 0.5): 26 layers from 14
  CHECK(c.config.layer_ffns == base.layer_ffns);
  // 11 of the 23 Mamba-2 layers re-run: state × 34/23.
  CHECK(c.deviation.state == Approx(11.0 / 23.0));
  bool said = false;
  for (const auto& note : r.summary.notes) {
    said = said || note.find("the layer pattern does not repeat within the stack") != std::string::npos;
  }
  CHECK(said);
}

TEST_CASE("hybrid match: a state weight puts the state in the objective, the constraints file reads it",
          "[match][hybrid]") {
  const ArchConfig base = load_arch_config(hf_data + "gpt-oss-20b.json");
  const MatchConstraints c = parse_constraints(R"({"weights": {"state": 2}, "max_deviation": {"state": 0.5}})",
                                               "c.json", default_constraints(base));
  CHECK(c.weight_state == 2.0);
  CHECK(c.max_state_deviation == 0.5);
  // The default row order is by proportions (issue 30); under --order tightest the state's weight
  // makes it the weighted objective's, the unweighted default the shown deviation's.
  CHECK(row_order(c) == RowOrder::proportions);
  MatchConstraints tightest = c;
  tightest.order = MatchOrder::tightest;
  CHECK(row_order(tightest) == RowOrder::weighted_objective);
  MatchConstraints tightest_default = default_constraints(base);
  tightest_default.order = MatchOrder::tightest;
  CHECK(row_order(tightest_default) == RowOrder::shown_deviation);
  CHECK_THROWS_WITH(parse_constraints(R"({"weights": {"stat": 2}})", "c.json", default_constraints(base)),
                    Catch::Contains("did you mean \"state\""));
}
