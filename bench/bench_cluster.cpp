// Cost of one layout's memory (issue 19: < 1 ms): training_memory() for the SMELT paper's 200M
// looped config on one GPU, Mixtral-8x7B under TP 2 (SP) × PP 4 × EP 4 on 16 GPUs, and the same
// with interleaving (V 2), plus one smallest-layout search (report --cluster) for Mixtral on H200.
// Part 2 (issue 20): one layout's communication and step time for DeepSeek-V3 on 1,024 GPUs, and
// the whole layout search for DeepSeek-V3 on 1,024 GPUs (goal: under a second); the matched
// ranking of item 4 (every equally matched DeepSeek-V3 candidate at its best layout on 1,024 GPUs,
// the match itself done once outside the loop). Each beside the exhaustive reference (/exhaustive:1,
// the search before its bound) in the same run.
//
//   bench_cluster [--benchmark_min_time=0.2] [--benchmark_filter=layout_search|rank_matched]

#include <algorithm>
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

// The first `candidates` equally matched (0: all of them, 2,634) ranked; /exhaustive:1 each
// searched by the exhaustive reference (before the bound; minutes for all, so compared on 64);
// /threads: 1 against 0 (every hardware thread) for the parallel ranking, same run.
void bm_rank_matched_deepseek_v3_1024(benchmark::State& state) {
  const budget::ArchConfig c = budget::load_arch_config(source_dir + "/tests/data/hf/deepseek-v3.json");
  const budget::ClusterSpec cluster = h200(128);
  budget::TimeRankOptions t;
  t.rank_by = budget::RankBy::time;
  t.top_n = 1 << 20;
  const budget::Workload w = budget::paper_workload();
  const budget::TimedMatch timed = budget::match_with_time(c, budget::LoopSpec{}, w, budget::default_constraints(c),
                                                           h200_model(), t);
  budget::LayoutSearchOptions o;
  o.gpus = 1024;
  o.global_batch_tokens = 4096 * 4096;
  o.keep = 1;
  o.time.attended_keys = w.attended_keys;
  o.exhaustive = state.range(1) != 0;
  o.threads = static_cast<unsigned>(state.range(2));  // 0: every hardware thread
  const auto candidates = static_cast<std::size_t>(state.range(0));
  state.counters["equally_matched"] = static_cast<double>(timed.within_tolerance);
  for (auto _ : state) {
    budget::TimedMatch copy = timed;
    if (candidates > 0) copy.within_tolerance = std::min(copy.within_tolerance, candidates);
    benchmark::DoNotOptimize(budget::rank_matched_on_cluster(copy, h200_model(), cluster, o, 5));
  }
  state.counters["ranked"] = static_cast<double>(candidates > 0 ? std::min(timed.within_tolerance, candidates)
                                                                 : timed.within_tolerance);
}
BENCHMARK(bm_rank_matched_deepseek_v3_1024)
    ->ArgNames({"candidates", "exhaustive", "threads"})
    ->Args({64, 0, 1})
    ->Args({64, 0, 0})
    ->Args({64, 1, 1})
    ->Args({0, 0, 0})
    ->UseRealTime()  // the work runs on worker threads: wall time, not the main thread's CPU
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
