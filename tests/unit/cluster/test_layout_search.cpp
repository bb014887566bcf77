// The layout search (docs/cluster.md, "Layout search") against brute force on a small space: every
// combination of the documented space timed directly with cluster_step_time (no cache, no shared
// enumeration), the fitting ones sorted; the search's best layouts are the same, in the same order.

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/calibration.hpp"
#include "budget/cluster.hpp"
#include "budget/cluster_time.hpp"
#include "budget/communication.hpp"
#include "budget/error.hpp"
#include "budget/layout_search.hpp"
#include "budget/time_model.hpp"
#include "budget/training_memory.hpp"
#include "support/accounting_fixtures.hpp"
#include "support/pipeline_split_brute.hpp"
#include "support/cluster_fixtures.hpp"

using namespace budget;

namespace {

const TimeModel& shipped_model() { return test::h200_eager_model(); }

}  // namespace

TEST_CASE("layout search: the best layouts equal brute force over the space", "[cluster][search]") {
  const ArchConfig c = test::paper_200m_baseline();  // 12 layers, 10 heads, 2 KV heads, 192 experts
  // Tight memory so that some layouts do not fit.
  const ClusterSpec cluster = test::eight_search_gpus(std::int64_t{16} << 30);
  LayoutSearchOptions o = test::search_on_8_gpus();
  o.seq_len = 4096;
  o.keep = 6;
  const LayoutSearchResult found = search_layouts(shipped_model(), c, cluster, o);
  REQUIRE_FALSE(found.layouts.empty());

  std::vector<RankedLayout> brute;
  std::int64_t valid = 0;
  std::int64_t uneven_valid = 0;  // layouts with first/last-stage counts (12 layers do not split evenly on PP 8)
  // (PP, V, first, last): every pipeline of the space, the uneven splits by brute force.
  const std::vector<std::array<std::int64_t, 4>> splits = test::brute_pipeline_space(12, 8);
  for (std::int64_t tp : {1, 2, 4}) {
    for (std::int64_t cp : {1, 2, 4, 8}) {
      for (const auto& [pp, v, first, last] : splits) {
        for (std::int64_t ep : {1, 2, 4, 8, 16, 32, 64, 128}) {
          for (std::int64_t etp : {std::int64_t{1}, tp}) {
            for (std::int64_t b : {1, 2, 4}) {
              for (int rc = 0; rc < 3; ++rc) {
                for (bool dist : {true, false}) {
                  if (tp * cp * pp > 8 || 8 % (tp * cp * pp) != 0) continue;
                  if (pp == 1 && v > 1) continue;
                  const std::int64_t dp = 8 / (tp * cp * pp);
                  if (o.global_batch_tokens % (b * o.seq_len * dp) != 0) continue;
                  ParallelLayout l = test::space_layout(tp, cp, {pp, v, first, last}, ep, etp, b,
                                                        o.global_batch_tokens / (b * o.seq_len * dp), o.seq_len);
                  l.recompute.kind = rc == 0 ? RecomputeKind::none : rc == 1 ? RecomputeKind::selective
                                                                             : RecomputeKind::full;
                  l.distributed_optimizer = dist;
                  if (!l.validation_error(c).empty()) continue;
                  ++valid;
                  if (first >= 0) ++uneven_valid;
                  TrainingMemory mem = training_memory(c, l, cluster);
                  if (!mem.fits) continue;
                  ClusterStepTime t = cluster_step_time(shipped_model(), c, mem, cluster);
                  brute.push_back({std::move(mem), std::move(t)});
                }
              }
            }
            if (etp == tp) break;  // TP = 1: one ETP choice
          }
        }
      }
    }
  }
  CHECK(found.valid == valid);
  CHECK(uneven_valid > 0);
  CHECK(found.fitting == static_cast<std::int64_t>(brute.size()));
  CHECK(found.fitting < found.valid);  // memory drops some
  std::stable_sort(brute.begin(), brute.end(), ranks_before);
  REQUIRE(brute.size() >= found.layouts.size());
  for (std::size_t i = 0; i < found.layouts.size(); ++i) {
    INFO("rank " << i);
    CHECK(found.layouts[i].time.seconds_per_step == Approx(brute[i].time.seconds_per_step).epsilon(1e-12));
    CHECK(found.layouts[i].memory.fits);
  }
  const ParallelLayout& best = found.layouts[0].memory.layout;
  const ParallelLayout& brute_best = brute[0].memory.layout;
  CHECK(best.tp == brute_best.tp);
  CHECK(best.pp == brute_best.pp);
  CHECK(best.ep == brute_best.ep);
  CHECK(best.cp == brute_best.cp);
  CHECK(best.micro_batch_size == brute_best.micro_batch_size);
  CHECK(best.recompute.kind == brute_best.recompute.kind);
  for (std::size_t i = 1; i < found.layouts.size(); ++i) {
    CHECK_FALSE(ranks_before(found.layouts[i], found.layouts[i - 1]));
  }
}

namespace {

/// The search's result layout for layout, bit for bit: the layout's every searched field, the step
/// time, its components, flags and notes, the headroom.
void check_same_layouts(const LayoutSearchResult& pruned, const LayoutSearchResult& exhaustive) {
  REQUIRE(pruned.layouts.size() == exhaustive.layouts.size());
  for (std::size_t i = 0; i < pruned.layouts.size(); ++i) {
    INFO("rank " << i);
    const RankedLayout& p = pruned.layouts[i];
    const RankedLayout& e = exhaustive.layouts[i];
    const ParallelLayout& pl = p.memory.layout;
    const ParallelLayout& el = e.memory.layout;
    CHECK(pl.tp == el.tp);
    CHECK(pl.sequence_parallel == el.sequence_parallel);
    CHECK(pl.cp == el.cp);
    CHECK(pl.pp == el.pp);
    CHECK(pl.virtual_stages == el.virtual_stages);
    CHECK(pl.dp == el.dp);
    CHECK(pl.ep == el.ep);
    CHECK(pl.etp == el.etp);
    CHECK(pl.micro_batch_size == el.micro_batch_size);
    CHECK(pl.micro_batches == el.micro_batches);
    CHECK(pl.recompute.kind == el.recompute.kind);
    CHECK(pl.distributed_optimizer == el.distributed_optimizer);
    CHECK(p.memory.headroom_bytes == e.memory.headroom_bytes);
    CHECK(p.time.seconds_per_step == e.time.seconds_per_step);
    CHECK(p.time.mfu == e.time.mfu);
    CHECK(p.time.out_of_range == e.time.out_of_range);
    CHECK(p.time.notes == e.time.notes);
    REQUIRE(p.time.by_component.size() == e.time.by_component.size());
    for (std::size_t c = 0; c < p.time.by_component.size(); ++c) {
      CHECK(p.time.by_component[c].name == e.time.by_component[c].name);
      CHECK(p.time.by_component[c].seconds == e.time.by_component[c].seconds);
    }
  }
}

}  // namespace

TEST_CASE("layout search: the bound-pruned search equals the exhaustive one", "[cluster][search]") {
  // The paper's pair (the looped config runs 18 executions of 12 layers) on 8 GPUs of 16 GiB, where
  // memory drops some layouts, and on 80 GiB, where all fit; the best 1, 3 and 12; memory checked
  // for every layout (layout's counts) or only where the bound allows (the cluster ranking).
  for (const ArchConfig& c : {test::paper_200m_baseline(), test::paper_200m_smelt()}) {
    for (const std::int64_t gib : {16, 80}) {
      for (const std::size_t keep : {std::size_t{1}, std::size_t{3}, std::size_t{12}}) {
        for (const bool count_fitting : {true, false}) {
          INFO(c.name << ", " << gib << " GiB, keep " << keep << ", count_fitting " << count_fitting);
          const ClusterSpec cluster = test::eight_search_gpus(gib << 30);
          LayoutSearchOptions o = test::search_on_8_gpus();
          o.keep = keep;
          o.count_fitting = count_fitting;
          LayoutSearchOptions brute = o;
          brute.exhaustive = true;
          const LayoutSearchResult pruned = search_layouts(shipped_model(), c, cluster, o);
          const LayoutSearchResult exhaustive = search_layouts(shipped_model(), c, cluster, brute);
          CHECK(pruned.enumerated == exhaustive.enumerated);
          CHECK(pruned.valid == exhaustive.valid);
          if (count_fitting) CHECK(pruned.fitting == exhaustive.fitting);
          CHECK(pruned.fitting <= exhaustive.fitting);
          CHECK(exhaustive.timed == exhaustive.fitting);
          CHECK(pruned.timed <= pruned.fitting);
          // The bound prunes: most fitting layouts are never timed. (Issue 32's optimizer step is not
          // in the bound, it needs each stage's parameters, known after the memory: on the baseline
          // at 16 GiB 167 of 655 are timed, 3.9×.)
          if (keep == 1) CHECK(pruned.timed * 3 < exhaustive.timed);
          check_same_layouts(pruned, exhaustive);
        }
      }
    }
  }
}

TEST_CASE("layout search: refusals", "[cluster][search]") {
  const ArchConfig c = test::paper_200m_baseline();
  const ClusterSpec cluster = test::eight_search_gpus(std::int64_t{80} << 30);
  LayoutSearchOptions o;
  o.gpus = 16;  // the cluster has 8
  CHECK_THROWS_AS(search_layouts(shipped_model(), c, cluster, o), Error);
  o.gpus = 8;
  o.global_batch_tokens = 100;
  CHECK_THROWS_AS(search_layouts(shipped_model(), c, cluster, o), Error);
  // Nothing fits 1 MiB GPUs: an empty list, not an error.
  o.global_batch_tokens = 4096 * 8;
  const LayoutSearchResult none = search_layouts(shipped_model(), c, test::eight_search_gpus(1 << 20), o);
  CHECK(none.layouts.empty());
  CHECK(none.fitting == 0);
  CHECK(none.valid > 0);
}

TEST_CASE("cluster ranking: the paper's looped config against its baseline at each one's best layout",
          "[cluster][search]") {
  const ArchConfig base = test::paper_200m_baseline();
  const ArchConfig smelt = test::paper_200m_smelt();
  const ClusterSpec cluster = test::eight_search_gpus(std::int64_t{80} << 30);
  LayoutSearchOptions o = test::search_on_8_gpus();
  const ClusterRanking r = rank_by_cluster_time(shipped_model(), base, {smelt}, cluster, o);
  REQUIRE(r.baseline.found);
  REQUIRE(r.candidates.size() == 1);
  const ClusterCandidateTime& s = r.candidates[0];
  REQUIRE(s.found);
  // Each at its own best layout: the search's first.
  LayoutSearchOptions one = o;
  one.keep = 1;
  const LayoutSearchResult sb = search_layouts(shipped_model(), smelt, cluster, one);
  CHECK(s.best.time.seconds_per_step == Approx(sb.layouts[0].time.seconds_per_step));
  CHECK(s.seconds_per_token == Approx(s.best.time.seconds_per_step / static_cast<double>(s.best.time.tokens_per_step)));
  CHECK(s.ratio_to_baseline == Approx(s.seconds_per_token / r.baseline.seconds_per_token));
  // Single GPU: predict_step_time at 8 sequences of 4096 tokens, causal.
  Workload w = causal_workload(4096);
  w.tokens_per_step = 8 * 4096;
  CHECK(s.single_gpu_ratio_to_baseline == Approx(predict_step_time(shipped_model(), smelt, w).seconds_per_token /
                                                 predict_step_time(shipped_model(), base, w).seconds_per_token));
  CHECK(s.moe_executions_per_token == 18.0);
  CHECK(r.baseline.moe_executions_per_token == 12.0);
  REQUIRE_FALSE(s.differences.empty());
  CHECK(s.differences[0].find("+50% MoE layer executions per token (18 vs 12); ") == 0);
  // All-to-alls are named only where a best layout has expert parallelism.
  const bool both_ep1 = s.best.memory.layout.ep == 1 && r.baseline.best.memory.layout.ep == 1;
  CHECK((s.differences[0].find("no all-to-all at either best layout (EP 1)") != std::string::npos) == both_ep1);
  // A baseline that fits nowhere is refused.
  CHECK_THROWS_AS(rank_by_cluster_time(shipped_model(), base, {smelt}, test::eight_search_gpus(1 << 20), o), Error);
}

namespace {

ClusterCandidateTime synthetic(std::vector<TimeComponent> parts, std::vector<CommTerm> terms, double seconds_per_step) {
  ClusterCandidateTime c;
  c.found = true;
  c.best.time.tokens_per_step = 1000;
  c.best.time.seconds_per_step = seconds_per_step;
  c.best.time.by_component = std::move(parts);
  c.best.time.slowest_stage = 0;
  c.best.time.communication.push_back({0, std::move(terms), 0.0, 0.0});
  c.seconds_per_token = seconds_per_step / 1000.0;
  return c;
}

CommTerm term(const char* name, CollectiveKind kind, double size, double calls) {
  CommTerm t;
  t.name = name;
  t.kind = kind;
  t.size_bytes = size;
  t.calls_per_step = calls;
  return t;
}

}  // namespace

TEST_CASE("cluster ranking: the ratio decomposition by component, by hand", "[cluster][search]") {
  // Baseline: 1.0 s a step of 1000 tokens = compute 0.8 + all-to-all 0.1 + bubble 0.1 (the DP
  // reduce-scatter 0.3 s overlapped); 24 all-to-all calls of 1000 bytes.
  const ClusterCandidateTime b = synthetic({{"compute", 0.8, false}, {"ep_all_to_all", 0.1, false},
                                            {"dp_grad_reduce_scatter", 0.3, true}, {"bubble", 0.1, false}},
                                           {term("ep", CollectiveKind::all_to_all, 1000, 24),
                                            term("dp_grad", CollectiveKind::reduce_scatter, 5000, 1)},
                                           1.0);
  // Candidate: 1.12 s = compute 0.9 + all-to-all 0.15 + TP all-gather 0.02 + bubble 0.05; 36 calls
  // of 800 bytes (+50% calls, −20% bytes a call), no DP term.
  const ClusterCandidateTime c = synthetic({{"compute", 0.9, false}, {"ep_all_to_all", 0.15, false},
                                            {"tp_all_gather", 0.02, false}, {"bubble", 0.05, false}},
                                           {term("ep", CollectiveKind::all_to_all, 800, 36),
                                            term("tp", CollectiveKind::all_gather, 50, 6),
                                            term("tp", CollectiveKind::all_gather, 150, 2)},
                                           1.12);
  const std::vector<RatioComponent> parts = ratio_components(c, b);
  // The baseline's order, then the candidate's own: compute, ep, dp_grad, bubble, tp.
  REQUIRE(parts.size() == 5);
  CHECK(parts[0].name == "compute");
  CHECK(parts[0].contribution == Approx(0.1));  // (0.9 − 0.8) / 1.0, both per 1000 tokens
  CHECK(parts[1].name == "ep_all_to_all");
  CHECK(parts[1].contribution == Approx(0.05));
  CHECK(parts[1].calls_per_token == Approx(0.036));
  CHECK(parts[1].baseline_calls_per_token == Approx(0.024));
  CHECK(parts[1].bytes_per_call == Approx(800));
  CHECK(parts[1].baseline_bytes_per_call == Approx(1000));
  CHECK(parts[2].name == "dp_grad_reduce_scatter");
  CHECK(parts[2].contribution == 0.0);  // overlapped: no exposed time on either side
  CHECK(parts[2].seconds_per_token == 0.0);
  CHECK(parts[3].name == "bubble");
  CHECK(parts[3].contribution == Approx(-0.05));
  CHECK(parts[4].name == "tp_all_gather");
  CHECK(parts[4].contribution == Approx(0.02));
  CHECK(parts[4].bytes_per_call == Approx((6 * 50 + 2 * 150) / 8.0));  // mean over the merged terms
  double sum = 0.0;
  for (const RatioComponent& p : parts) sum += p.contribution;
  CHECK(sum == Approx(1.12 - 1.0));
  ClusterCandidateTime none = c;
  none.found = false;
  CHECK_THROWS_AS(ratio_components(none, b), Error);
}

TEST_CASE("cluster ranking: the paper's 200M pair, ratio decomposition", "[cluster][search]") {
  const ArchConfig base = test::paper_200m_baseline();
  const ArchConfig smelt = test::paper_200m_smelt();
  const ClusterSpec cluster = test::eight_search_gpus(std::int64_t{80} << 30);
  LayoutSearchOptions o = test::search_on_8_gpus();
  // The loop held in one chunk (issue 41's in_chunk): this case checks the decomposition at the
  // looped config's best layout with EP > 1, which a wrapped loop on PP 2 no longer needs.
  o.recipe.base.loop_placement = LoopPlacement::in_chunk;
  o.recipe.hold_loop_placement = true;
  const ClusterRanking r = rank_by_cluster_time(shipped_model(), base, {smelt}, cluster, o);
  REQUIRE(r.candidates.size() == 1);
  const ClusterCandidateTime& s = r.candidates[0];
  REQUIRE(s.found);
  const ClusterCandidateTime& b = r.baseline;
  // By hand from each best layout's components: exposed seconds per token over the baseline's.
  double sum = 0.0;
  for (const RatioComponent& p : s.ratio_components) {
    INFO(p.name);
    double x = 0.0;
    double y = 0.0;
    for (const TimeComponent& t : s.best.time.by_component) {
      if (t.name == p.name && !t.overlapped) x += t.seconds;
    }
    for (const TimeComponent& t : b.best.time.by_component) {
      if (t.name == p.name && !t.overlapped) y += t.seconds;
    }
    const double xs = x / static_cast<double>(s.best.time.tokens_per_step);
    const double ys = y / static_cast<double>(b.best.time.tokens_per_step);
    CHECK(p.contribution == Approx((xs - ys) / b.seconds_per_token).margin(1e-15));
    sum += p.contribution;
  }
  CHECK(sum == Approx(s.ratio_to_baseline - 1.0).margin(1e-12));
  const auto ep = std::find_if(s.ratio_components.begin(), s.ratio_components.end(),
                               [](const RatioComponent& p) { return p.name == "ep_all_to_all"; });
  REQUIRE(ep != s.ratio_components.end());
  // Per executed MoE layer one dispatch and one combine a pass: at one layout (the looped config's
  // best, EP > 1; the baseline's best differs since issue 32's all-to-all and optimizer costs) the
  // looped config makes 18/12 = +50% all-to-all calls, each (T/r)·k rows of H·2 bytes and the
  // alltoall dispatcher's 4-byte probability a row: (1056·2 + 4)/(1280·2 + 4) of the baseline's bytes.
  const ParallelLayout& sl = s.best.memory.layout;
  REQUIRE(sl.ep > 1);
  const auto ep_calls_and_size = [&](const ArchConfig& c) {
    double calls = 0.0, size = 0.0;
    const std::vector<StageCommunication> stages = step_communication(c, training_memory(c, sl, cluster), cluster);
    for (const StageCommunication& stage : stages) {
      for (const CommTerm& t : stage.terms) {
        if (t.name != "ep") continue;
        calls += t.calls_per_step;
        size = t.size_bytes;
      }
    }
    return std::make_pair(calls, size);
  };
  const auto [looped_calls, looped_size] = ep_calls_and_size(smelt);
  const auto [base_calls, base_size] = ep_calls_and_size(base);
  REQUIRE(base_calls > 0.0);
  CHECK(looped_calls / base_calls == Approx(1.5));
  CHECK(looped_size / base_size == Approx((1056.0 * 2 + 4) / (1280.0 * 2 + 4)));
  // F per token from the accounting; τ = GPU-seconds per token / F.
  CHECK(s.gpu_seconds_per_flop == Approx(s.gpu_seconds_per_token / s.training_flops_per_token));
  CHECK(s.training_flops_per_token > 0.0);
}

TEST_CASE("cluster ranking: a candidate with no fitting layout is kept, last, and said so", "[cluster][search]") {
  const ArchConfig base = test::paper_200m_baseline();
  // 64× the routed weights: no layout of 8 GPUs holds it in 16 GiB.
  const ArchConfig huge = test::with_expert_dim(base, "huge", 432 * 64);
  const ClusterSpec cluster = test::eight_search_gpus(std::int64_t{16} << 30);
  LayoutSearchOptions o = test::search_on_8_gpus();
  const ClusterRanking r = rank_by_cluster_time(shipped_model(), base, {huge, base}, cluster, o);
  REQUIRE(r.candidates.size() == 2);
  CHECK(r.candidates[0].found);
  CHECK(r.candidates[0].input_index == 1);
  CHECK(r.candidates[0].ratio_to_baseline == Approx(1.0));  // the baseline itself
  CHECK_FALSE(r.candidates[1].found);
  CHECK(r.candidates[1].input_index == 0);
  CHECK(r.candidates[1].ratio_components.empty());
  REQUIRE(r.candidates[1].differences.size() == 1);
  CHECK_THAT(r.candidates[1].differences[0],
             Catch::StartsWith("no layout fits: none of the ") && Catch::Contains("valid layouts leaves room"));
}

TEST_CASE("cluster ranking: the same ranking, bit for bit, on one thread and on several", "[cluster][search]") {
  const ArchConfig base = test::paper_200m_baseline();
  const ArchConfig smelt = test::paper_200m_smelt();
  const ArchConfig wide = test::with_expert_dim(base, "wide", 432 * 2);
  const ArchConfig huge = test::with_expert_dim(base, "huge", 432 * 64);  // no layout of 8 GPUs holds it in 16 GiB
  const std::vector<ArchConfig> list{smelt, huge, wide, base, smelt, wide, huge};
  const ClusterSpec cluster = test::eight_search_gpus(std::int64_t{16} << 30);
  LayoutSearchOptions o = test::search_on_8_gpus();
  o.threads = 1;
  const ClusterRanking one = rank_by_cluster_time(shipped_model(), base, list, cluster, o);
  for (const unsigned threads : {2u, 3u, 16u}) {
    o.threads = threads;
    const ClusterRanking many = rank_by_cluster_time(shipped_model(), base, list, cluster, o);
    INFO(threads << " threads");
    REQUIRE(many.candidates.size() == one.candidates.size());
    for (std::size_t i = 0; i < one.candidates.size(); ++i) {
      const ClusterCandidateTime& a = one.candidates[i];
      const ClusterCandidateTime& b = many.candidates[i];
      CHECK(a.input_index == b.input_index);
      CHECK(a.found == b.found);
      CHECK(a.seconds_per_token == b.seconds_per_token);  // exact: the same operations in the same order
      CHECK(a.single_gpu_seconds_per_token == b.single_gpu_seconds_per_token);
      CHECK(a.differences == b.differences);
      CHECK(a.best.memory.layout.tp == b.best.memory.layout.tp);
      CHECK(a.best.memory.layout.ep == b.best.memory.layout.ep);
      CHECK(a.best.memory.layout.pp == b.best.memory.layout.pp);
    }
  }
  // Equal inputs rank as equals, in input order (a stable sort of identical times).
  std::vector<std::size_t> smelt_positions;
  for (const ClusterCandidateTime& c : one.candidates) {
    if (c.input_index == 0 || c.input_index == 4) smelt_positions.push_back(c.input_index);
  }
  CHECK(smelt_positions == std::vector<std::size_t>{0, 4});
}
