// Matched candidates on a cluster (cluster_match.hpp; issue 30, items 3 and 5): ranked at matched
// work, and only those trainable at scale kept: a fitting layout on the cluster, and a fewest-GPU
// layout on at most twice the GPUs the baseline's needs; the others dropped with the reason.

#include <string>

#include <catch2/catch.hpp>

#include "budget/cluster.hpp"
#include "budget/cluster_match.hpp"
#include "budget/config_io.hpp"
#include "budget/layout_search.hpp"
#include "budget/match.hpp"
#include "budget/time_model.hpp"
#include "budget/training_memory.hpp"

using namespace budget;

namespace {
const std::string shipped_profile = std::string(BUDGET_SOURCE_DIR) + "/cuda_profiler/profiles/h200-torch-eager.json";
const std::string h200 = std::string(BUDGET_SOURCE_DIR) + "/examples/clusters/h200.json";

Candidate as_candidate(const ArchConfig& config, const ArchConfig& baseline, const Workload& w) {
  return evaluate_candidate(config, baseline, account(baseline, w), w, default_constraints(baseline));
}
}  // namespace

TEST_CASE("cluster ranking keeps every candidate that fits the GPUs given and says why it drops the others",
          "[cluster][match]") {
  const TimeModel model(load_calibration_profile(shipped_profile));
  const ClusterSpec cluster = load_cluster_spec(h200);
  const Workload w = paper_workload();
  const ArchConfig baseline = load_arch_config(std::string(BUDGET_SOURCE_DIR) + "/examples/configs/paper-200M-S95-baseline.json");
  // The baseline (3.87 G parameters) fits one H200; eight times its experts (about 31 G
  // parameters, ~16 bytes each of weights, gradients and Adam states) need more than two.
  REQUIRE(smallest_fitting_layout(baseline, cluster, 4096).memory.layout.gpus == 1);
  ArchConfig wide = baseline;
  wide.name = "eight-times-the-experts";
  wide.ffn.num_experts = 8 * baseline.ffn.num_experts;
  REQUIRE_FALSE(smallest_fitting_layout(wide, cluster, 4096, 2).found);
  const auto timed_pair = [&] {
    TimedMatch timed;
    timed.result.baseline = baseline;
    timed.result.summary.feasible = true;
    for (const ArchConfig& c : {wide, baseline}) {
      timed.result.candidates.push_back(as_candidate(c, baseline, w));
      timed.candidate_times.push_back(predict_step_time(model, c, w));
      timed.time_ratios.push_back(1.0);
      timed.time_ratios_per_token.push_back(1.0);
    }
    timed.within_tolerance = 2;
    return timed;
  };
  // On 8 GPUs both fit: both ranked, although the wide one needs more than twice the baseline's
  // fewest GPUs (issue 41: trainable means fits the GPUs given).
  TimedMatch on_eight = timed_pair();
  std::vector<ClusterDropped> none;
  const ClusterRanking both =
      rank_matched_on_cluster(on_eight, model, cluster, cluster_rank_search_options(w, 8, 4 * 1024 * 1024, 0), 5, &none);
  CHECK(both.candidates.size() == 2);
  CHECK(none.empty());
  // On 2 GPUs the wide one fits no layout: dropped, with why.
  TimedMatch timed = timed_pair();
  std::vector<ClusterDropped> dropped;
  const ClusterRanking ranking =
      rank_matched_on_cluster(timed, model, cluster, cluster_rank_search_options(w, 2, 4 * 1024 * 1024, 0), 5, &dropped);
  REQUIRE(ranking.candidates.size() == 1);
  REQUIRE(timed.result.candidates.size() == 1);
  CHECK(timed.result.candidates.front().config.ffn.num_experts == baseline.ffn.num_experts);
  REQUIRE(dropped.size() == 1);
  CHECK(dropped.front().config.ffn.num_experts == wide.ffn.num_experts);
  CHECK_THAT(dropped.front().reason, Catch::Contains("no layout on 2 GPUs"));
  // At matched work: the ranking is by GPU-seconds per training FLOP.
  CHECK(ranking.candidates.front().found);
  CHECK(ranking.candidates.front().gpu_seconds_per_flop > 0.0);
}
