// The fewest-GPU layout that fits (report --cluster; the search space and the order of ties:
// smallest_fitting_layout() in budget/training_memory.hpp).
#include <algorithm>
#include <string>
#include <vector>

#include "budget/layout_search.hpp"
#include "budget/training_memory.hpp"
#include "layout/dispatcher_limits.hpp"
#include "search/search_progress.hpp"
#include "search/search_pipelines.hpp"

namespace budget {
namespace {

struct SmallestPipeline {
  std::int64_t pp = 1;
  std::int64_t v = 1;
  LoopPlacement placement = LoopPlacement::in_chunk;
  PipelineSplit split;  ///< even, or a wrap layout per stage
};

/// PP dividing the layers evenly, one chunk a rank (in_chunk: the physical layers; replicated: the
/// executed ones), and for a looped config the wrap layouts (wrap_splits()); the recipe's placement
/// alone where it holds one.
std::vector<SmallestPipeline> smallest_pipelines(const ArchConfig& config, const LayoutRecipe* recipe) {
  const bool looped = config.loop && config.loop->repeats > 1;
  const bool held = looped && recipe != nullptr && recipe->hold_loop_placement;  // no loop: in_chunk alone
  const auto tried = [&](LoopPlacement p) {
    return held ? recipe->base.loop_placement == p : (p == LoopPlacement::in_chunk || looped);
  };
  std::vector<SmallestPipeline> out;
  for (std::int64_t p = 1; p <= config.executed_layers(); ++p) {
    if (tried(LoopPlacement::in_chunk) && p <= config.num_layers && config.num_layers % p == 0) {
      out.push_back({p, 1, LoopPlacement::in_chunk, {}});
    }
    if (tried(LoopPlacement::wrap)) {
      for (const WrapSplit& w : wrap_splits(config, p)) out.push_back({p, w.virtual_stages, LoopPlacement::wrap, PipelineSplit::per_stage(w.pipeline_layout, "wrap layout")});
      if (held && p == 1) out.push_back({p, 1, LoopPlacement::wrap, {}});
    }
    // Unheld, replicated where wrap has no layout (search/search_pipelines.hpp).
    if (tried(LoopPlacement::replicated) && (p > 1 || held) && config.executed_layers() % p == 0 &&
        (held || wrap_splits(config, p).empty())) {
      out.push_back({p, 1, LoopPlacement::replicated, {}});
    }
  }
  return out;
}

}  // namespace

SmallestLayout smallest_fitting_layout(const ArchConfig& config, const ClusterSpec& cluster, std::int64_t seq_len,
                                       std::int64_t max_gpus, const LayoutRecipe* recipe) {
  const ParallelLayout held = recipe != nullptr ? recipe_template(*recipe) : ParallelLayout{};
  const bool hold_recompute = recipe != nullptr && recipe->hold_recompute;
  struct Candidate {
    ParallelLayout layout;
    int recompute_rank;
    int placement_rank;
  };
  std::vector<Candidate> candidates;
  const std::vector<SmallestPipeline> pipelines = smallest_pipelines(config, recipe);
  const std::int64_t experts = config.ffn.is_moe() ? config.ffn.num_experts : 1;
  for (std::int64_t tp = 1; tp <= cluster.gpus_per_node; tp *= 2) {
    for (const SmallestPipeline& pipeline : pipelines) {
      const std::int64_t pp = pipeline.pp;
      for (std::int64_t dp = 1; tp * pp * dp <= max_gpus; dp *= 2) {
        for (std::int64_t ep = 1; ep <= experts && ep <= tp * dp; ep *= 2) {
          if ((tp * dp) % ep != 0) continue;
          for (int rc = 0; rc < (hold_recompute ? 1 : 3); ++rc) {
            ParallelLayout l = held;
            l.tp = tp;
            l.sequence_parallel = tp > 1;
            l.pp = pp;
            l.dp = dp;
            l.gpus = tp * pp * dp;
            l.ep = ep;
            l.etp = config.ffn.is_moe() ? 1 : 0;
            l.seq_len = seq_len;
            l.micro_batches = pp;
            l.virtual_stages = pipeline.v;
            l.loop_placement = pipeline.placement;
            l.split = pipeline.split;
            if (recipe == nullptr || !recipe->hold_distributed_optimizer) l.distributed_optimizer = true;
            if (!hold_recompute) {
              l.recompute = {};
              l.recompute.kind = rc == 0 ? RecomputeKind::none : rc == 1 ? RecomputeKind::selective : RecomputeKind::full;
            }
            if (!config.ffn.is_moe()) l.capacity_factor = 0.0;
            detail::search_progress(true, "smallest layout (layouts of the space)",
                                    static_cast<std::int64_t>(candidates.size()), 0);
            // Validated when tried (below): fewest GPUs first, most are never reached.
            candidates.push_back({l, rc, static_cast<int>(pipeline.placement)});
          }
        }
      }
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.layout.gpus != b.layout.gpus) return a.layout.gpus < b.layout.gpus;
    if (a.recompute_rank != b.recompute_rank) return a.recompute_rank < b.recompute_rank;
    if (a.layout.pp != b.layout.pp) return a.layout.pp < b.layout.pp;
    if (a.layout.tp != b.layout.tp) return a.layout.tp < b.layout.tp;
    return a.placement_rank < b.placement_rank;
  });
  ClusterSpec unlimited = cluster;
  unlimited.nodes = (max_gpus + cluster.gpus_per_node - 1) / cluster.gpus_per_node;
  SmallestLayout result;
  const auto total = static_cast<std::int64_t>(candidates.size());
  std::int64_t visited = 0;
  for (const Candidate& c : candidates) {
    detail::search_progress(true, "smallest layout (layouts tried, fewest GPUs first)", visited++, total);
    if (!c.layout.validation_error(config).empty()) continue;
    if (!detail::dispatcher_cluster_error(c.layout, config, cluster.nvlink_domain()).empty()) continue;
    ++result.candidates_tried;
    TrainingMemory m = training_memory(config, c.layout, unlimited);
    if (m.fits) {
      result.found = true;
      result.memory = std::move(m);
      break;
    }
  }
  detail::search_progress(true, "smallest layout (layouts tried, fewest GPUs first)", total, total);
  return result;
}

}  // namespace budget
