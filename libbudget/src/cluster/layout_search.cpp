// Layout search (docs/cluster.md, "Layout search"): enumerate, drop what does not fit, rank by
// step time. Compute part times are cached per shard (PartTimesCache): they do not depend on PP,
// V, DP or the micro-batch count.
#include "budget/layout_search.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "cluster/step_compute.hpp"

namespace budget {

bool ranks_before(const RankedLayout& a, const RankedLayout& b) {
  if (a.time.seconds_per_step != b.time.seconds_per_step) return a.time.seconds_per_step < b.time.seconds_per_step;
  return a.memory.headroom_bytes > b.memory.headroom_bytes;
}

LayoutSearchResult search_layouts(const TimeModel& model, const ArchConfig& config, const ClusterSpec& cluster,
                                  const LayoutSearchOptions& o) {
  if (o.gpus < 1 || o.gpus > cluster.total_gpus()) {
    throw Error(fmt::format("{} GPUs: the cluster has {} ({} nodes of {}); set more nodes (--nodes)", o.gpus,
                            cluster.total_gpus(), cluster.nodes, cluster.gpus_per_node),
                "--gpus");
  }
  if (o.seq_len < 1) throw Error(fmt::format("seq_len = {} is below 1", o.seq_len), "--seq-len");
  if (o.global_batch_tokens < o.seq_len) {
    throw Error(fmt::format("global batch of {} tokens is less than one sequence of {}", o.global_batch_tokens,
                            o.seq_len),
                "--global-batch-tokens");
  }
  if (o.keep < 1) throw Error("keep at least one layout", "keep");
  LayoutSearchResult result;
  const std::int64_t experts = config.ffn.is_moe() ? config.ffn.num_experts : 1;
  std::vector<std::int64_t> pps;
  for (std::int64_t p = 1; p <= config.num_layers && p <= o.gpus; ++p) {
    if (config.num_layers % p == 0 && o.gpus % p == 0) pps.push_back(p);
  }
  PartTimesCache cache;
  std::vector<RankedLayout> ranked;
  for (std::int64_t tp = 1; tp <= cluster.gpus_per_node && tp <= o.gpus; tp *= 2) {
    for (std::int64_t cp = 1; cp <= 8 && tp * cp <= o.gpus; cp *= 2) {
      for (const std::int64_t pp : pps) {
        if (o.gpus % (tp * cp * pp) != 0) continue;
        const std::int64_t dp = o.gpus / (tp * cp * pp);
        for (std::int64_t v = 1; v <= (pp > 1 ? 4 : 1); v *= 2) {
          for (std::int64_t ep = 1; ep <= experts; ep *= 2) {
            if (experts % ep != 0) continue;
            for (const std::int64_t etp : {std::int64_t{1}, tp}) {
              if (tp > 1 && etp == tp && !config.ffn.is_moe()) continue;  // ETP only matters with experts
              for (std::int64_t b = 1; b <= 4; b *= 2) {
                const std::int64_t per_micro_batch = b * o.seq_len * dp;
                if (o.global_batch_tokens % per_micro_batch != 0) continue;
                const std::int64_t m = o.global_batch_tokens / per_micro_batch;
                for (int rc = 0; rc < 3; ++rc) {
                  for (const bool dist : {true, false}) {
                    ++result.enumerated;
                    ParallelLayout l;
                    l.tp = tp;
                    l.sequence_parallel = tp > 1;
                    l.cp = cp;
                    l.pp = pp;
                    l.virtual_stages = v;
                    l.dp = dp;
                    l.gpus = o.gpus;
                    l.ep = ep;
                    l.etp = config.ffn.is_moe() ? etp : 0;
                    l.micro_batch_size = b;
                    l.micro_batches = m;
                    l.seq_len = o.seq_len;
                    l.recompute.kind = rc == 0 ? RecomputeKind::none
                                               : rc == 1 ? RecomputeKind::selective : RecomputeKind::full;
                    l.distributed_optimizer = dist;
                    l.imbalance = config.ffn.is_moe() ? o.imbalance : 1.0;
                    if (!l.validation_error(config).empty()) continue;
                    ++result.valid;
                    TrainingMemory mem = training_memory(config, l, cluster);
                    if (!mem.fits) continue;
                    ++result.fitting;
                    ClusterStepTime time = assemble_step_time(model, config, mem, cluster, o.time,
                                                              layer_times(model, config, l, o.time, &cache));
                    ranked.push_back({std::move(mem), std::move(time)});
                  }
                }
              }
              if (etp == tp) break;  // TP = 1: ETP 1 and TP are the same choice
            }
          }
        }
      }
    }
  }
  const std::size_t keep = std::min(o.keep, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep), ranked.end(), ranks_before);
  ranked.resize(keep);
  result.layouts = std::move(ranked);
  return result;
}

}  // namespace budget
