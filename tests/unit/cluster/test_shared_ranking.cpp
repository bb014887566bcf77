// The cluster ranking with shared work (docs/cluster.md, "Shared work across candidates") against
// the reference that searches every candidate on its own (LayoutSearchOptions::share_work false):
// the same rows, in the same order, with the same figures bit for bit, for several tops, thread
// counts, configs and clusters; and a ranking stopped by the time limit returns only rows that the
// reference has too.

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/calibration.hpp"
#include "budget/error.hpp"
#include "budget/cluster.hpp"
#include "budget/config_io.hpp"
#include "budget/layout_search.hpp"
#include "budget/match.hpp"
#include "budget/progress.hpp"
#include "budget/time_model.hpp"
#include "budget/time_rank.hpp"
#include "support/accounting_fixtures.hpp"
#include "support/cluster_fixtures.hpp"

using namespace budget;

namespace {

const TimeModel& shared_rank_model() { return test::h200_eager_model(); }

const std::string shared_rank_source = BUDGET_SOURCE_DIR;

/// The paper's 200M baseline and looped config with variants of the baseline, duplicates included:
/// "wide" and "huge" (2× and 64× the expert width; huge fits no layout of 8 GPUs of 16 GiB) share
/// the baseline's structure, "fewer" has 96 experts.
std::vector<ArchConfig> hand_made_list(const ArchConfig& base) {
  const ArchConfig smelt = test::paper_200m_smelt();
  const ArchConfig wide = test::with_expert_dim(base, "wide", 432 * 2);
  const ArchConfig huge = test::with_expert_dim(base, "huge", 432 * 64);
  ArchConfig fewer = base;
  fewer.name = "fewer";
  fewer.ffn.num_experts = 96;
  return {smelt, huge, wide, base, fewer, smelt, wide, huge};
}

/// One node of 8 H100s (examples/clusters/h100-sxm.json) with 16 GiB each.
ClusterSpec h100_node_of_16_gib() {
  ClusterSpec cluster = load_cluster_spec(shared_rank_source + "/examples/clusters/h100-sxm.json", 1);
  cluster.memory_bytes = std::int64_t{16} << 30;
  return cluster;
}

/// Every field a ranking prints, compared exactly.
void check_same_candidate(const ClusterCandidateTime& a, const ClusterCandidateTime& b) {
  CHECK(a.input_index == b.input_index);
  CHECK(a.name == b.name);
  CHECK(a.found == b.found);
  CHECK(a.seconds_per_token == b.seconds_per_token);
  CHECK(a.gpu_seconds_per_token == b.gpu_seconds_per_token);
  CHECK(a.single_gpu_seconds_per_token == b.single_gpu_seconds_per_token);
  CHECK(a.ratio_to_baseline == b.ratio_to_baseline);
  CHECK(a.single_gpu_ratio_to_baseline == b.single_gpu_ratio_to_baseline);
  CHECK(a.training_flops_per_token == b.training_flops_per_token);
  CHECK(a.gpu_seconds_per_flop == b.gpu_seconds_per_flop);
  CHECK(a.differences == b.differences);
  REQUIRE(a.ratio_components.size() == b.ratio_components.size());
  for (std::size_t i = 0; i < a.ratio_components.size(); ++i) {
    CHECK(a.ratio_components[i].name == b.ratio_components[i].name);
    CHECK(a.ratio_components[i].contribution == b.ratio_components[i].contribution);
  }
  if (!a.found || !b.found) return;
  const ParallelLayout &x = a.best.memory.layout, &y = b.best.memory.layout;
  CHECK(std::make_tuple(x.tp, x.cp, x.pp, x.virtual_stages, x.ep, x.etp, x.dp, x.micro_batch_size, x.micro_batches,
                        static_cast<int>(x.recompute.kind), x.distributed_optimizer) ==
        std::make_tuple(y.tp, y.cp, y.pp, y.virtual_stages, y.ep, y.etp, y.dp, y.micro_batch_size, y.micro_batches,
                        static_cast<int>(y.recompute.kind), y.distributed_optimizer));
  CHECK(a.best.memory.headroom_bytes == b.best.memory.headroom_bytes);
  CHECK(a.best.time.seconds_per_step == b.best.time.seconds_per_step);
  CHECK(a.best.time.mfu == b.best.time.mfu);
  CHECK(a.best.time.out_of_range == b.best.time.out_of_range);
  CHECK(a.best.time.notes == b.best.time.notes);
}

void check_same_ranking(const ClusterRanking& shared, const ClusterRanking& reference, std::size_t top) {
  check_same_candidate(shared.baseline, reference.baseline);
  REQUIRE(shared.candidates.size() == std::min(top, reference.candidates.size()));
  for (std::size_t i = 0; i < shared.candidates.size(); ++i) {
    INFO("row " << i);
    check_same_candidate(shared.candidates[i], reference.candidates[i]);
  }
}

/// The equally matched candidates of `baseline` (the whole lattice, --free-shapes, with a 2%
/// tolerance: many candidates over many structures, some sharing one; SMELT loop), fastest on one
/// GPU first: what the CLI's --cluster ranking is given.
std::vector<ArchConfig> equally_matched(const ArchConfig& baseline) {
  TimeRankOptions t;
  t.rank_by = RankBy::time;
  t.top_n = 1 << 20;
  t.full_step_times = false;
  MatchConstraints c = default_constraints(baseline, ShapeSpace::free);
  c.tolerance = 0.02;
  const TimedMatch timed =
      match_with_time(baseline, LoopSpec::smelt(), paper_workload(), c, shared_rank_model(), t);
  std::vector<ArchConfig> out;
  for (std::size_t i = 0; i < timed.within_tolerance; ++i) out.push_back(timed.result.candidates[i].config);
  return out;
}

}  // namespace

TEST_CASE("cluster ranking: shared work, the reference's rows, bit for bit, for every top and thread count",
          "[cluster][search][shared]") {
  // The paper's 200M cell matched (tens of candidates over several structures, some sharing one)
  // on 64 H200s: the top 1, 3, 5 and every candidate, on 1, 2 and 3 threads.
  const ArchConfig base = test::paper_200m_baseline();
  const std::vector<ArchConfig> candidates = equally_matched(base);
  REQUIRE(candidates.size() >= 10);
  const ClusterSpec cluster = load_cluster_spec(shared_rank_source + "/examples/clusters/h200.json", 8);
  LayoutSearchOptions o = cluster_rank_search_options(paper_workload(), 64, 1 << 20, 0);
  o.share_work = false;
  o.threads = 1;
  const ClusterRanking reference = rank_by_cluster_time(shared_rank_model(), base, candidates, cluster, o);
  CHECK(reference.searched == candidates.size());
  o.share_work = true;
  for (const std::size_t top : {std::size_t{1}, std::size_t{3}, std::size_t{5}, candidates.size()}) {
    for (const unsigned threads : {1u, 2u, 3u}) {
      INFO("top " << top << ", " << threads << " threads");
      o.threads = threads;
      const ClusterRanking shared = rank_by_cluster_time(shared_rank_model(), base, candidates, cluster, o, top);
      check_same_ranking(shared, reference, top);
      CHECK_FALSE(shared.partial);
      CHECK(shared.given == candidates.size());
      CHECK(shared.finished == candidates.size());
      if (top == candidates.size()) CHECK(shared.searched == candidates.size());  // nothing to prune
    }
  }
  // The top 1 of many is found without establishing every candidate's best layout.
  o.threads = 1;
  CHECK(rank_by_cluster_time(shared_rank_model(), base, candidates, cluster, o, 1).searched < candidates.size());
}

TEST_CASE("cluster ranking: shared work, duplicates, a candidate that fits nowhere, a tight memory, another cluster",
          "[cluster][search][shared]") {
  // Equal candidates tie in input order; one with 64× the routed weights fits no layout of 8 GPUs
  // of 16 GiB (it ranks last, and is cut when enough others fit); structures shared by several
  // candidates (wide/base/huge differ only in the expert width).
  const ArchConfig base = test::paper_200m_baseline();
  const std::vector<ArchConfig> list = hand_made_list(base);
  const ClusterSpec cluster = h100_node_of_16_gib();
  LayoutSearchOptions o = cluster_rank_search_options(causal_workload(4096), 8, 8 * 4096 * 4, 0);
  o.share_work = false;
  const ClusterRanking reference = rank_by_cluster_time(shared_rank_model(), base, list, cluster, o);
  REQUIRE_FALSE(reference.candidates.back().found);
  o.share_work = true;
  for (std::size_t top = 1; top <= list.size(); ++top) {
    for (const unsigned threads : {1u, 2u, 4u}) {
      INFO("top " << top << ", " << threads << " threads");
      o.threads = threads;
      check_same_ranking(rank_by_cluster_time(shared_rank_model(), base, list, cluster, o, top), reference, top);
    }
  }
  // Without `top`, every candidate is ranked (the full ranking, shared).
  check_same_ranking(rank_by_cluster_time(shared_rank_model(), base, list, cluster, o), reference, list.size());
}

TEST_CASE("cluster ranking: shared work, a MoE with first dense layers and shared experts on 1,024 GPUs",
          "[cluster][search][shared]") {
  // DeepSeek-V3's candidates (MLA, first dense layers, a shared expert, 256 experts): the first 24
  // of its equally matched set, top 3, against the reference on 1,024 H200s.
  const ArchConfig base = load_arch_config(shared_rank_source + "/tests/data/hf/deepseek-v3.json");
  std::vector<ArchConfig> candidates = equally_matched(base);
  REQUIRE(candidates.size() > 24);
  candidates.resize(24);
  const ClusterSpec cluster = load_cluster_spec(shared_rank_source + "/examples/clusters/h200.json", 128);
  LayoutSearchOptions o = cluster_rank_search_options(paper_workload(), 1024, 4 * 1024 * 1024, 0);
  o.share_work = false;
  const ClusterRanking reference = rank_by_cluster_time(shared_rank_model(), base, candidates, cluster, o);
  o.share_work = true;
  o.threads = 2;
  const ClusterRanking shared = rank_by_cluster_time(shared_rank_model(), base, candidates, cluster, o, 3);
  check_same_ranking(shared, reference, 3);
  CHECK(shared.searched < candidates.size());
}

TEST_CASE("cluster ranking: shared work, stopped by the time limit, it returns the best of what it finished",
          "[cluster][search][shared]") {
  const ArchConfig base = test::paper_200m_baseline();
  const std::vector<ArchConfig> candidates = equally_matched(base);
  const ClusterSpec cluster = load_cluster_spec(shared_rank_source + "/examples/clusters/h200.json", 8);
  LayoutSearchOptions o = cluster_rank_search_options(paper_workload(), 64, 1 << 20, 0);
  o.share_work = false;
  const ClusterRanking reference = rank_by_cluster_time(shared_rank_model(), base, candidates, cluster, o);
  o.share_work = true;
  // The time limit's error (budget::TimeLimitError, caught by its type), raised deterministically as
  // the first candidate finishes (the ranking reports progress as each one does): what a limit
  // passing at that moment throws.
  set_progress_callback([](std::string_view what, std::uint64_t done, std::uint64_t total) {
    if (what.rfind("cluster ranking", 0) == 0 && done >= 1 && done < total) {
      throw TimeLimitError("stopped after 0 s, the time limit (test)", std::string(what), "time limit");
    }
  });
  ClusterRanking partial;
  try {
    partial = rank_by_cluster_time(shared_rank_model(), base, candidates, cluster, o, 5);
  } catch (...) {
    set_progress_callback({});
    throw;
  }
  set_progress_callback({});
  REQUIRE(partial.partial);
  CHECK(partial.stopped_by.find("time limit") != std::string::npos);
  CHECK(partial.given == candidates.size());
  CHECK(partial.finished <= partial.given);
  CHECK(partial.searched <= partial.finished);
  // Each row is exactly the reference's row of that candidate, and the rows are in ranking order.
  for (std::size_t i = 0; i < partial.candidates.size(); ++i) {
    const ClusterCandidateTime& row = partial.candidates[i];
    const auto same = std::find_if(reference.candidates.begin(), reference.candidates.end(),
                                   [&](const ClusterCandidateTime& r) { return r.input_index == row.input_index; });
    REQUIRE(same != reference.candidates.end());
    check_same_candidate(row, *same);
    if (i > 0) CHECK(partial.candidates[i - 1].seconds_per_token <= row.seconds_per_token);
  }
}

namespace {

/// A deterministic refusal: every candidate without a layout, and every third one by input index.
std::string refuse_every_third(const ClusterCandidateTime& c, std::size_t i) {
  if (!c.found) return "fits nowhere (test)";
  return i % 3 == 1 ? "every third (test)" : std::string();
}

void check_same_refusals(const ClusterRanking& shared, const ClusterRanking& reference) {
  REQUIRE(shared.refused.size() == reference.refused.size());
  for (std::size_t i = 0; i < shared.refused.size(); ++i) {
    CHECK(shared.refused[i].input_index == reference.refused[i].input_index);
    CHECK(shared.refused[i].reason == reference.refused[i].reason);
  }
  CHECK(shared.unchecked.empty());
  CHECK(reference.unchecked.empty());
}

}  // namespace

TEST_CASE("cluster ranking: shared work in the per-FLOP order with refusals, the reference's rows bit for bit",
          "[cluster][search][shared]") {
  // ClusterRankOrder (what the matcher's --cluster ranking asks: GPU-seconds per FLOP, candidates
  // not trainable at scale refused): the shared ranking prunes against the top-th admitted
  // candidate's key, converted to a step time per candidate, and asks `refuse` on its threads; the
  // reference searches every candidate in full, sorts by the key and walks it. Both orders, every
  // top, 1, 2 and 4 threads, on the hand-made list (duplicates, one fitting nowhere) and the paper
  // cell's equally matched set.
  const ArchConfig base = test::paper_200m_baseline();
  const std::vector<ArchConfig> list = hand_made_list(base);
  const ClusterSpec small = h100_node_of_16_gib();
  LayoutSearchOptions o = cluster_rank_search_options(causal_workload(4096), 8, 8 * 4096 * 4, 0);
  for (const bool per_flop : {false, true}) {
    ClusterRankOrder order;
    order.per_flop = per_flop;
    order.refuse = refuse_every_third;
    o.share_work = false;
    const ClusterRanking reference =
        rank_by_cluster_time(shared_rank_model(), base, list, small, o, list.size(), order);
    REQUIRE_FALSE(reference.refused.empty());
    CHECK(reference.candidates.size() + reference.refused.size() == list.size());
    o.share_work = true;
    for (std::size_t top = 1; top <= list.size(); ++top) {
      o.share_work = false;
      const ClusterRanking cut = rank_by_cluster_time(shared_rank_model(), base, list, small, o, top, order);
      o.share_work = true;
      for (const unsigned threads : {1u, 2u, 4u}) {
        INFO("per FLOP " << per_flop << ", top " << top << ", " << threads << " threads");
        o.threads = threads;
        const ClusterRanking shared = rank_by_cluster_time(shared_rank_model(), base, list, small, o, top, order);
        check_same_ranking(shared, cut, top);
        check_same_refusals(shared, cut);
        CHECK_FALSE(shared.partial);
      }
    }
  }
  // The paper cell on 64 H200s in the per-FLOP order: the found ones by GPU-seconds per FLOP.
  const std::vector<ArchConfig> candidates = equally_matched(base);
  const ClusterSpec cluster = load_cluster_spec(shared_rank_source + "/examples/clusters/h200.json", 8);
  LayoutSearchOptions p = cluster_rank_search_options(paper_workload(), 64, 1 << 20, 0);
  ClusterRankOrder order;
  order.per_flop = true;
  order.refuse = refuse_every_third;
  p.share_work = false;
  p.threads = 2;
  const ClusterRanking reference = rank_by_cluster_time(shared_rank_model(), base, candidates, cluster, p,
                                                        candidates.size(), order);
  for (std::size_t i = 1; i < reference.candidates.size(); ++i) {
    CHECK(reference.candidates[i - 1].gpu_seconds_per_flop <= reference.candidates[i].gpu_seconds_per_flop);
  }
  p.share_work = true;
  for (const std::size_t top : {std::size_t{1}, std::size_t{3}, std::size_t{5}}) {
    p.share_work = false;
    const ClusterRanking cut = rank_by_cluster_time(shared_rank_model(), base, candidates, cluster, p, top, order);
    p.share_work = true;
    for (const unsigned threads : {1u, 2u}) {
      INFO("paper cell, top " << top << ", " << threads << " threads");
      p.threads = threads;
      const ClusterRanking shared = rank_by_cluster_time(shared_rank_model(), base, candidates, cluster, p, top, order);
      check_same_ranking(shared, reference, top);
      check_same_refusals(shared, cut);
      if (top == 1) CHECK(shared.searched < candidates.size());
    }
  }
}
