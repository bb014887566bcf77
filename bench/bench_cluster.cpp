// Cost of one layout's memory (issue 19: < 1 ms): training_memory() for the SMELT paper's 200M
// looped config on one GPU, Mixtral-8x7B under TP 2 (SP) × PP 4 × EP 4 on 16 GPUs, and the same
// with interleaving (V 2), plus one smallest-layout search (report --cluster) for Mixtral on H200.
// Part 2 (issue 20): one layout's communication and step time for DeepSeek-V3 on 1,024 GPUs, and
// the whole layout search for DeepSeek-V3 on 1,024 GPUs (goal: under a second), beside the
// exhaustive reference (/exhaustive:1, the search before its bound) in the same run; the matched
// ranking (issue 35: DeepSeek-V3 on 1,024 GPUs and Qwen3-30B-A3B on 256, every equally matched
// candidate at its best layout, the top 5 kept), shared (/shared:1) beside the reference that
// searches each candidate on its own (/shared:0) in the same run.
//
//   bench_cluster [--benchmark_min_time=0.2] [--benchmark_filter=layout_search|rank_matched|qwen3]

#include <algorithm>
#include <map>
#include <string>

#include <benchmark/benchmark.h>

#include "budget/calibration.hpp"
#include "budget/cluster.hpp"
#include "budget/cluster_match.hpp"
#include "budget/cluster_time.hpp"
#include "budget/communication.hpp"
#include "budget/layout_search.hpp"
#include "budget/time_model.hpp"
#include "budget/time_rank.hpp"
#include "budget/config_io.hpp"
#include "budget/parallel_layout.hpp"
#include "budget/training_memory.hpp"

namespace {

const std::string source_dir = BUDGET_SOURCE_DIR;

budget::ClusterSpec h200(std::int64_t nodes) {
  return budget::load_cluster_spec(source_dir + "/examples/clusters/h200.json", nodes);
}

void bm_memory_paper_looped_one_gpu(benchmark::State& state) {
  const budget::ArchConfig c = budget::load_arch_config(source_dir + "/examples/configs/paper-200M-S95-smelt.json");
  const budget::ClusterSpec cluster = h200(1);
  budget::ParallelLayout l;
  l.gpus = 1;
  l.micro_batch_size = 8;
  for (auto _ : state) benchmark::DoNotOptimize(budget::training_memory(c, l, cluster));
}
BENCHMARK(bm_memory_paper_looped_one_gpu)->Unit(benchmark::kMicrosecond);

void bm_memory_mixtral_tp2_pp4_ep4(benchmark::State& state) {
  const budget::ArchConfig c = budget::load_arch_config(source_dir + "/examples/hf/mixtral-8x7b.json");
  const budget::ClusterSpec cluster = h200(2);
  budget::ParallelLayout l;
  l.tp = 2;
  l.sequence_parallel = true;
  l.pp = 4;
  l.virtual_stages = state.range(0);
  l.ep = 4;
  l.etp = 1;
  l.gpus = 16;
  l.micro_batches = 8;
  l.distributed_optimizer = true;
  for (auto _ : state) benchmark::DoNotOptimize(budget::training_memory(c, l, cluster));
}
BENCHMARK(bm_memory_mixtral_tp2_pp4_ep4)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

void bm_smallest_layout_mixtral(benchmark::State& state) {
  const budget::ArchConfig c = budget::load_arch_config(source_dir + "/examples/hf/mixtral-8x7b.json");
  const budget::ClusterSpec cluster = h200(1);
  for (auto _ : state) benchmark::DoNotOptimize(budget::smallest_fitting_layout(c, cluster, 4096));
}
BENCHMARK(bm_smallest_layout_mixtral)->Unit(benchmark::kMillisecond);

const budget::TimeModel& h200_model() {
  static const budget::TimeModel model(
      budget::load_calibration_profile(source_dir + "/cuda_profiler/profiles/h200-torch-eager.json"));
  return model;
}

budget::ParallelLayout deepseek_layout() {
  budget::ParallelLayout l;
  l.tp = 4;
  l.sequence_parallel = true;
  l.ep = 64;
  l.etp = 1;
  l.gpus = 1024;
  l.micro_batches = 16;
  l.distributed_optimizer = true;
  return l;
}

void bm_communication_deepseek_v3_1024(benchmark::State& state) {
  const budget::ArchConfig c = budget::load_arch_config(source_dir + "/tests/data/hf/deepseek-v3.json");
  const budget::ClusterSpec cluster = h200(128);
  const budget::TrainingMemory mem = budget::training_memory(c, deepseek_layout(), cluster);
  for (auto _ : state) benchmark::DoNotOptimize(budget::step_communication(c, mem, cluster));
}
BENCHMARK(bm_communication_deepseek_v3_1024)->Unit(benchmark::kMicrosecond);

void bm_step_time_deepseek_v3_1024(benchmark::State& state) {
  const budget::ArchConfig c = budget::load_arch_config(source_dir + "/tests/data/hf/deepseek-v3.json");
  const budget::ClusterSpec cluster = h200(128);
  const budget::TrainingMemory mem = budget::training_memory(c, deepseek_layout(), cluster);
  for (auto _ : state) benchmark::DoNotOptimize(budget::cluster_step_time(h200_model(), c, mem, cluster));
}
BENCHMARK(bm_step_time_deepseek_v3_1024)->Unit(benchmark::kMicrosecond);

// The search as `budget-match layout` runs it (the best 5, memory checked for every layout so that
// the counts are whole), /exhaustive:1 the reference that times every fitting layout through the
// row path (what the search did before the bound): their ratio in one run is the speed-up.
void bm_layout_search_deepseek_v3_1024(benchmark::State& state) {
  const budget::ArchConfig c = budget::load_arch_config(source_dir + "/tests/data/hf/deepseek-v3.json");
  const budget::ClusterSpec cluster = h200(128);
  budget::LayoutSearchOptions o;
  o.gpus = 1024;
  o.global_batch_tokens = 4096 * 4096;
  o.exhaustive = state.range(0) != 0;
  budget::LayoutSearchResult last;
  for (auto _ : state) {
    last = budget::search_layouts(h200_model(), c, cluster, o);
    benchmark::DoNotOptimize(last);
  }
  state.counters["valid"] = static_cast<double>(last.valid);
  state.counters["fitting"] = static_cast<double>(last.fitting);
  state.counters["timed"] = static_cast<double>(last.timed);
}
BENCHMARK(bm_layout_search_deepseek_v3_1024)->ArgName("exhaustive")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The matched ranking (budget-match --baseline B --rank-by time --cluster C --gpus N --top 5, the
// match done once outside the loop): the first `candidates` of the equally matched set (0: all of
// them) ranked and cut to the top 5. /shared:1 is the ranking with shared work (part times per
// structure, layouts above the top-th best step time skipped; docs/cluster.md, "Shared work across
// candidates"); /shared:0 the reference, every candidate searched on its own as before it (each
// part timed with its whole layer): their ratio on the same candidates in one run is the speed-up.
// /threads: 1 against 0 (every hardware thread). Time is wall time, CPU that of every thread.
struct RankedMatch {
  budget::ArchConfig baseline;
  budget::TimedMatch timed;
  budget::ClusterSpec cluster;
  budget::LayoutSearchOptions search;
};

const RankedMatch& ranked_match(const std::string& config, const std::string& cluster, std::int64_t nodes,
                                std::int64_t gpus) {
  static std::map<std::string, RankedMatch> cache;
  const std::string key = config + cluster + std::to_string(gpus);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  RankedMatch m;
  m.baseline = budget::load_arch_config(source_dir + config);
  m.cluster = budget::load_cluster_spec(source_dir + cluster, nodes);
  budget::TimeRankOptions t;
  t.rank_by = budget::RankBy::time;
  t.top_n = 1 << 28;
  t.full_step_times = false;
  const budget::Workload w = budget::paper_workload();
  m.timed = budget::match_with_time(m.baseline, budget::LoopSpec::smelt(), w, budget::default_constraints(m.baseline),
                                    h200_model(), t);
  m.search = budget::cluster_rank_search_options(w, gpus, 4 * 1024 * 1024, 0);
  return cache.emplace(key, std::move(m)).first->second;
}

void rank_matched(benchmark::State& state, const RankedMatch& m) {
  budget::LayoutSearchOptions o = m.search;
  o.share_work = state.range(1) != 0;
  o.threads = static_cast<unsigned>(state.range(2));  // 0: every hardware thread
  // /placements:0 holds loop placement in_chunk (the search space before issue 41, the reference);
  // /placements:1 tries in_chunk, wrap and replicated for each looped candidate.
  o.recipe.hold_loop_placement = state.range(3) == 0;
  const auto candidates = static_cast<std::size_t>(state.range(0));
  const std::size_t ranked = candidates > 0 ? std::min(m.timed.within_tolerance, candidates) : m.timed.within_tolerance;
  budget::ClusterRanking last;
  for (auto _ : state) {
    budget::TimedMatch copy = m.timed;
    copy.within_tolerance = ranked;
    last = budget::rank_matched_on_cluster(copy, h200_model(), m.cluster, o, 5);
    benchmark::DoNotOptimize(last);
  }
  state.counters["equally_matched"] = static_cast<double>(m.timed.within_tolerance);
  state.counters["ranked"] = static_cast<double>(ranked);
  state.counters["established"] = static_cast<double>(last.searched);
  state.counters["best_us_per_token"] = last.candidates.empty() ? 0.0 : 1e6 * last.candidates[0].seconds_per_token;
}

/// The ranking benchmarks' settings: their arguments named, one iteration, wall time reported
/// and the CPU time of every thread measured (on a shared machine, wall time says little).
void ranking_settings(benchmark::internal::Benchmark* b) {
  b->ArgNames({"candidates", "shared", "threads", "placements"})
      ->Iterations(1)
      ->MeasureProcessCPUTime()
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

// DeepSeek-V3 (tests/data/hf/deepseek-v3.json, 2,634 equally matched) on 1,024 H200s.
void bm_rank_matched_deepseek_v3_1024(benchmark::State& state) {
  rank_matched(state, ranked_match("/tests/data/hf/deepseek-v3.json", "/examples/clusters/h200.json", 128, 1024));
}
BENCHMARK(bm_rank_matched_deepseek_v3_1024)
    ->Args({128, 0, 0, 1})
    ->Args({128, 1, 0, 1})
    ->Args({0, 1, 0, 0})
    ->Args({0, 1, 0, 1})
    ->Args({0, 1, 2, 0})
    ->Args({0, 1, 2, 1})
    ->Args({0, 1, 1, 1})
    ->Apply(ranking_settings);

// Qwen3-30B-A3B (tests/data/hf/qwen3-30b-a3b.json, 42,428 equally matched) on 256 H100s (the H200
// profile's compute, docs/cluster.md): the reference on the first 256, the shared ranking on the
// same and on all (minutes: --benchmark_filter=qwen3 to run it alone).
void bm_rank_matched_qwen3_30b_256(benchmark::State& state) {
  rank_matched(state, ranked_match("/tests/data/hf/qwen3-30b-a3b.json", "/examples/clusters/h100-sxm.json", 32, 256));
}
BENCHMARK(bm_rank_matched_qwen3_30b_256)
    ->Args({256, 0, 0, 1})
    ->Args({256, 1, 0, 1})
    ->Args({0, 1, 0, 1})
    ->Apply(ranking_settings);

}  // namespace

BENCHMARK_MAIN();
