// Regression tests of the fourth audit (issue 33, docs/reliability.md) in the cluster domain:
// products of sizes checked in the layout and its search (no wrapped token counts, no SIGFPE), the
// time limit in every search, the stored-layer pass, why a search found nothing, --min-headroom and
// --run-tokens, one attended-keys default, a resized cluster's name, a GPU name with control bytes.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/calibration.hpp"
#include "budget/cluster.hpp"
#include "budget/error.hpp"
#include "budget/layout_search.hpp"
#include "budget/parallel_layout.hpp"
#include "budget/progress.hpp"
#include "budget/time_model.hpp"
#include "budget/training_memory.hpp"
#include "budget/workload.hpp"
#include "support/accounting_fixtures.hpp"
#include "support/cluster_fixtures.hpp"

using namespace budget;

namespace {

const TimeModel& audit4_model() { return test::h200_eager_model(); }

using test::error_of;

ClusterSpec audit4_cluster(std::int64_t nodes, std::int64_t memory_bytes = std::int64_t{141} << 30) {
  ClusterSpec c = test::test_nodes(nodes, 8, memory_bytes);
  c.name = "1 node of 8 test GPUs";
  c.compute.peak_bf16_dense_flops_per_s = 989e12;
  return c;
}

/// The layout of one micro-batch of `seq_len` on `gpus` GPUs of DP.
ParallelLayout dp_layout(std::int64_t gpus, std::int64_t seq_len) {
  ParallelLayout l;
  l.gpus = gpus;
  l.seq_len = seq_len;
  return l;
}

}  // namespace

TEST_CASE("a layout whose tokens a step pass 2^50 is refused, never wrapped", "[cluster]") {
  const ArchConfig c = test::paper_200m_baseline();
  // Before: b·s·m·DP = 2^20 · 2^32 · 2^20 · 2^5 wrapped int64 ("a step of -9223372036854775808 tokens").
  ParallelLayout l = dp_layout(32, std::int64_t{1} << 32);
  l.micro_batch_size = std::int64_t{1} << 20;
  l.micro_batches = std::int64_t{1} << 20;
  CHECK(l.validation_error(c) ==
        "a step of micro_batch_size x seq_len x micro_batches x DP = 1048576 x 4294967296 x 1048576 x 32 tokens is "
        "more than the 2^50 a layout is planned for");
  // At the limit: 2^50 exactly is a valid layout's count.
  ParallelLayout at = dp_layout(1, std::int64_t{1} << 30);
  at.micro_batch_size = std::int64_t{1} << 10;
  at.micro_batches = std::int64_t{1} << 10;
  CHECK(at.validation_error(c).empty());
}

TEST_CASE("the vocabulary divisor (--vocab-divisible-by) is bounded and the padded vocabulary checked", "[cluster]") {
  ArchConfig c = test::paper_200m_baseline();
  c.vocab_size = 32000;
  ParallelLayout l = dp_layout(8, 4096);
  // Before: 9223372036854775807 padded the vocabulary "to 0" (embedding, head and logits vanished).
  l.vocab_divisible_by = std::numeric_limits<std::int64_t>::max();
  CHECK(l.validation_error(c) == "vocab_divisible_by = 9223372036854775807 is above 1048576 (Megatron's default is 128)");
  l.tp = 2;
  CHECK_THAT(error_of([&] { (void)l.padded_vocab(c.vocab_size); }).message(),
             Catch::Contains("vocabulary multiple (vocab_divisible_by x TP) = 9223372036854775807 * 2 is outside"));
  l.vocab_divisible_by = std::int64_t{1} << 20;
  CHECK(l.padded_vocab(32000) == std::int64_t{1} << 21);  // 2^20 · TP 2 = 2^21 ≥ 32000
}

TEST_CASE("the layout search never divides by a wrapped product (the SIGFPE)", "[cluster][search]") {
  // b · s · DP = 1 · 2^32 · 2^32 = 2^64 wraps to 0 (4 · 2^50 · 2^12 did, before seq_len was bounded)
  // and `global % 0` killed the process. 2^32 GPUs: 2^20 nodes of 2^12.
  const ArchConfig c = test::paper_200m_baseline();
  ClusterSpec huge = audit4_cluster(std::int64_t{1} << 20);
  huge.gpus_per_node = std::int64_t{1} << 12;
  LayoutSearchOptions o;
  o.gpus = std::int64_t{1} << 32;
  o.seq_len = std::int64_t{1} << 32;  // the largest sequence allowed
  o.global_batch_tokens = std::int64_t{1} << 50;
  const LayoutSearchResult found = search_layouts(audit4_model(), c, huge, o);
  CHECK(found.layouts.empty());
  CHECK(found.batch_skipped > 0);
  CHECK_THAT(no_layout_reason(found, o), Catch::Contains("the global batch of 1125899906842624 tokens divides into no "
                                                         "micro-batch"));
}

TEST_CASE("no layout on 49 GPUs is blamed on the global batch, not on TP", "[cluster][search]") {
  const ArchConfig c = test::paper_200m_baseline();  // 10 heads, 2 KV heads: TP 4 and 8 refused
  LayoutSearchOptions o;
  // 49 = 7·7: TP, CP 1 (powers of two), PP 1 or 7 (the 12 layers split unevenly, 1 + 5·2 + 1), so DP
  // is 49 or 7. (On 7 GPUs PP 7 and DP 1 now run it.)
  o.gpus = 49;
  o.global_batch_tokens = 4 * 1024 * 1024;  // 2^22: no DP of 49 or 7 divides it
  const LayoutSearchResult found = search_layouts(audit4_model(), c, audit4_cluster(7), o);
  CHECK(found.valid == 0);
  const std::string why = no_layout_reason(found, o);
  CHECK_THAT(why, Catch::StartsWith("no layout: the global batch of 4194304 tokens divides into no micro-batch of b x "
                                    "seq_len x DP tokens") &&
                      Catch::Contains("DP 49") && !Catch::Contains("fits") && !Catch::Contains("TP"));
  // Before: the ranking said "no layout of the baseline ... fits 7 GPUs".
  const Error e = error_of([&] { rank_by_cluster_time(audit4_model(), c, {}, audit4_cluster(7), o); });
  CHECK(e.source() == no_baseline_layout_source);
  CHECK_THAT(e.message(), Catch::Contains("divides into no micro-batch") && !Catch::Contains(" fits "));
}

TEST_CASE("every layout search obeys the time limit", "[cluster][search]") {
  const ArchConfig c = test::paper_200m_baseline();
  LayoutSearchOptions o;
  o.gpus = 8;
  set_work_time_limit(1e-9, "raise the limit with --max-seconds S");
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const Error search = error_of([&] { search_layouts(audit4_model(), c, audit4_cluster(1), o); });
  o.report_progress = false;  // nested in the ranking: the limit still holds
  const Error nested = error_of([&] { search_layouts(audit4_model(), c, audit4_cluster(1), o); });
  o.exhaustive = true;
  const Error exhaustive = error_of([&] { search_layouts(audit4_model(), c, audit4_cluster(1), o); });
  const Error smallest = error_of([&] { smallest_fitting_layout(c, audit4_cluster(1), 4096); });
  set_work_time_limit(0);
  for (const Error* e : {&search, &nested, &exhaustive}) {
    CHECK(e->path() == "time limit");
    CHECK_THAT(e->text(), Catch::StartsWith("layout search (valid layouts of the space): time limit: stopped after"));
  }
  CHECK(smallest.path() == "time limit");
  CHECK_THAT(smallest.text(), Catch::StartsWith("smallest layout (layouts of the space): time limit"));
}

TEST_CASE("the stored layers of a stage are counted once, in order, through replicated loops",
          "[cluster][memory]") {
  // The loop over layers 1-12 ×4 spread over PP 2 × V 2 with replicated weights: each chunk runs 12
  // executions; rank 0 holds chunks 0 and 2, which store layers 1-12 once between them.
  ArchConfig c = test::paper_200m_baseline();
  c.loop = LoopConfig{1, 12, 4};
  ParallelLayout l = dp_layout(2, 4096);
  l.pp = 2;
  l.virtual_stages = 2;
  l.micro_batches = 2;
  l.loop_placement = LoopPlacement::replicated;
  const TrainingMemory m = training_memory(c, l, audit4_cluster(1, std::int64_t{1} << 40));
  REQUIRE(m.stages.size() == 2);
  for (const StageMemory& s : m.stages) {
    CHECK(s.executed_layers == 24);
    CHECK(std::is_sorted(s.stored_layers.begin(), s.stored_layers.end()));
    CHECK(std::adjacent_find(s.stored_layers.begin(), s.stored_layers.end()) == s.stored_layers.end());
  }
  CHECK(m.stages[0].stored_layers == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
}

TEST_CASE("the headroom (--min-headroom) keeps only the layouts that leave the margin", "[cluster][search]") {
  const ArchConfig c = test::paper_200m_baseline();
  LayoutSearchOptions o;
  o.gpus = 8;
  o.keep = 50;
  const LayoutSearchResult all = search_layouts(audit4_model(), c, audit4_cluster(1), o);
  REQUIRE(all.layouts.size() > 1);
  double most = 0.0;
  for (const RankedLayout& r : all.layouts) most = std::max(most, r.memory.headroom_bytes);
  o.min_headroom_bytes = most - 1.0;  // only the layouts with the most headroom are left
  const LayoutSearchResult margin = search_layouts(audit4_model(), c, audit4_cluster(1), o);
  REQUIRE_FALSE(margin.layouts.empty());
  CHECK(margin.fitting < all.fitting);
  for (const RankedLayout& r : margin.layouts) CHECK(r.memory.headroom_bytes >= o.min_headroom_bytes);
  o.min_headroom_bytes = 1e15;  // more than any GPU holds
  const LayoutSearchResult none = search_layouts(audit4_model(), c, audit4_cluster(1), o);
  CHECK(none.layouts.empty());
  CHECK_THAT(no_layout_reason(none, o), Catch::StartsWith("no layout fits: none of the") &&
                                            Catch::Contains("of headroom asked for (--min-headroom)"));
  o.min_headroom_bytes = -1.0;
  CHECK(error_of([&] { search_layouts(audit4_model(), c, audit4_cluster(1), o); }).source() == "min_headroom");
}

TEST_CASE("run_cost: each searched layout's run of run_tokens", "[cluster][search]") {
  const ArchConfig c = test::paper_200m_baseline();
  LayoutSearchOptions o;
  o.gpus = 8;
  o.keep = 2;
  o.run_tokens = 1e12;
  const LayoutSearchResult found = search_layouts(audit4_model(), c, audit4_cluster(1), o);
  REQUIRE(found.layouts.size() == 2);
  for (const RankedLayout& r : found.layouts) {
    const double step_s = r.time.seconds_per_step;
    const double tokens = static_cast<double>(r.time.tokens_per_step);
    const RunCost run = run_cost(r.time, r.memory.layout.gpus, o.run_tokens);
    CHECK(run.steps == Approx(1e12 / tokens));
    CHECK(run.wall_clock_seconds == Approx(1e12 / tokens * step_s));
    CHECK(run.gpu_hours == Approx(1e12 / tokens * step_s * 8 / 3600.0));
  }
  CHECK_THROWS_WITH(run_cost(found.layouts.front().time, 8, 0.0), Catch::Contains("run tokens = 0 must be positive"));
}

TEST_CASE("one attended-keys default for layout and the cluster ranking", "[cluster]") {
  const Workload paper = paper_workload();
  CHECK(layout_attended_keys(paper) == 400.0);
  CHECK(cluster_rank_search_options(paper, 8, 1 << 22, 0).time.attended_keys == layout_attended_keys(paper));
  Workload causal = paper;
  causal.attention_mask = AttentionMask::causal;
  CHECK(layout_attended_keys(causal) == 0.0);
  CHECK(attended_keys_text(400.0, 4096) == "400 mean attended keys a query");
  CHECK(attended_keys_text(0.0, 4096) == "causal, (s + 1)/2 = 2048.5 keys a query");
}

TEST_CASE("a resized cluster's name says its size", "[cluster]") {
  ClusterSpec c = audit4_cluster(1);
  resize_cluster(c, 32, "--nodes");
  CHECK(c.nodes == 32);
  CHECK(c.name == "1 node of 8 test GPUs, resized to 32 nodes of 8");
  ClusterSpec same = audit4_cluster(1);
  resize_cluster(same, 1, "--nodes");
  CHECK(same.name == "1 node of 8 test GPUs");
  CHECK_THAT(error_of([&] { resize_cluster(same, 0, "--nodes"); }).text(), Catch::Contains("nodes 0 is below 1"));
}

TEST_CASE("a cluster's GPU name with control characters is refused", "[cluster]") {
  const std::string text = R"({"schema": "budget.cluster", "schema_version": 1,
    "gpu": {"name": "H200\u001b[2J\u001b]0;owned\u0007", "memory_GiB": 141,
            "compute": {"datasheet": {"bf16_dense_TFLOPs": 989, "source": "x"}}},
    "gpus_per_node": 8, "nodes": 1,
    "intra_node": {"bandwidth_GBps": 450, "latency_us": 3}, "inter_node": {"bandwidth_GBps": 50, "latency_us": 5}})";
  const Error e = error_of([&] { parse_cluster_spec(text, "c.json"); });
  CHECK(e.path() == "/gpu/name");
  CHECK_THAT(e.text(), Catch::Contains("the device name \"H200\\x1b[2J\\x1b]0;owned\\x07\" holds control characters"));
}
