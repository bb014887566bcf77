// The fewest-GPU layout that fits (report --cluster; the search space and the order of ties:
// smallest_fitting_layout() in budget/training_memory.hpp).
#include <algorithm>
#include <vector>

#include "budget/training_memory.hpp"
#include "cluster/search_progress.hpp"

namespace budget {

SmallestLayout smallest_fitting_layout(const ArchConfig& config, const ClusterSpec& cluster, std::int64_t seq_len,
                                       std::int64_t max_gpus, const LayoutRecipe* recipe) {
  const ParallelLayout held = recipe != nullptr ? recipe_template(*recipe) : ParallelLayout{};
  const bool hold_recompute = recipe != nullptr && recipe->hold_recompute;
  struct Candidate {
    ParallelLayout layout;
    int recompute_rank;
  };
  std::vector<Candidate> candidates;
  std::vector<std::int64_t> pps;
  for (std::int64_t p = 1; p <= config.num_layers; ++p) {
    if (config.num_layers % p == 0) pps.push_back(p);
  }
  const std::int64_t experts = config.ffn.is_moe() ? config.ffn.num_experts : 1;
  for (std::int64_t tp = 1; tp <= cluster.gpus_per_node; tp *= 2) {
    for (const std::int64_t pp : pps) {
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
            if (recipe == nullptr || !recipe->hold_distributed_optimizer) l.distributed_optimizer = true;
            if (!hold_recompute) {
              l.recompute = {};
              l.recompute.kind = rc == 0 ? RecomputeKind::none : rc == 1 ? RecomputeKind::selective : RecomputeKind::full;
            }
            if (!config.ffn.is_moe()) l.capacity_factor = 0.0;
            detail::search_progress(true, "smallest layout (layouts of the space)",
                                    static_cast<std::int64_t>(candidates.size()), 0);
            if (!l.validation_error(config).empty()) continue;
            candidates.push_back({l, rc});
          }
        }
      }
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.layout.gpus != b.layout.gpus) return a.layout.gpus < b.layout.gpus;
    if (a.recompute_rank != b.recompute_rank) return a.recompute_rank < b.recompute_rank;
    if (a.layout.pp != b.layout.pp) return a.layout.pp < b.layout.pp;
    return a.layout.tp < b.layout.tp;
  });
  ClusterSpec unlimited = cluster;
  unlimited.nodes = (max_gpus + cluster.gpus_per_node - 1) / cluster.gpus_per_node;
  SmallestLayout result;
  const auto total = static_cast<std::int64_t>(candidates.size());
  for (const Candidate& c : candidates) {
    detail::search_progress(true, "smallest layout (layouts tried, fewest GPUs first)", result.candidates_tried, total);
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
