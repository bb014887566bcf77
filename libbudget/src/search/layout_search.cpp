// Layout search (docs/cluster.md, "Layout search"): enumerate, drop what does not fit, rank by
// step time. Compute part times are cached per shard (PartTimesCache, the indexed path): they do
// not depend on PP, V, DP or the micro-batch count; layouts are timed best bound first while the
// bound can still beat the kept ones (budget/layout_search.hpp).
#include "budget/layout_search.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/workload.hpp"
#include "layout/stage_executions.hpp"
#include "layout/dispatcher_limits.hpp"
#include "layout/layout_recipe.hpp"
#include "search/layout_search_options.hpp"
#include "layout/pipeline_split.hpp"
#include "search/search_pipelines.hpp"
#include "search/search_progress.hpp"
#include "step_time/step_compute.hpp"
#include "base/checked_math.hpp"
#include "base/parallel_for.hpp"
#include "search/structure_share.hpp"

namespace budget {

bool ranks_before(const RankedLayout& a, const RankedLayout& b) {
  if (a.time.seconds_per_step != b.time.seconds_per_step) return a.time.seconds_per_step < b.time.seconds_per_step;
  return a.memory.headroom_bytes > b.memory.headroom_bytes;
}

namespace {

using detail::search_progress;
constexpr std::string_view enumerating = "layout search (valid layouts of the space)";
constexpr std::string_view timing = "layout search (layouts timed, best bound first)";

/// The values the search tries of the micro-batch size, the recompute and the distributed optimizer:
/// the recipe's where it holds them, else 1, 2, 4; none, selective, full; on, off.
struct RecipeChoices {
  std::vector<std::int64_t> micro_batch_sizes;
  std::vector<RecomputeSpec> recomputes;
  std::vector<bool> distributed_optimizer;
};

RecipeChoices recipe_choices(const LayoutRecipe& r) {
  RecipeChoices c;
  c.micro_batch_sizes = r.hold_micro_batch_size ? std::vector<std::int64_t>{r.base.micro_batch_size}
                                                : std::vector<std::int64_t>{1, 2, 4};
  if (r.hold_recompute) {
    c.recomputes = {r.base.recompute};
  } else {
    for (const RecomputeKind kind : {RecomputeKind::none, RecomputeKind::selective, RecomputeKind::full}) {
      RecomputeSpec spec;
      spec.kind = kind;
      c.recomputes.push_back(spec);
    }
  }
  c.distributed_optimizer = r.hold_distributed_optimizer ? std::vector<bool>{r.base.distributed_optimizer}
                                                         : std::vector<bool>{true, false};
  return c;
}

/// Every combination of the space (budget/layout_search.hpp) in its order, outermost first: TP, CP,
/// PP, the loop placement, V, the pipeline split (search_pipelines()), EP,
/// ETP, micro-batch size, recompute, distributed optimizer; each layout the recipe's
/// template (recipe_template()) with these set; `visit(layout)` for each (counted in `enumerated`),
/// valid or not.
template <class Visit>
void enumerate_layouts(const ArchConfig& config, const ClusterSpec& cluster, const LayoutSearchOptions& o,
                       LayoutSearchResult& result, Visit&& visit) {
  const std::int64_t experts = config.ffn.is_moe() ? config.ffn.num_experts : 1;
  const ParallelLayout held = recipe_template(o.recipe);
  const RecipeChoices choices = recipe_choices(o.recipe);
  const std::vector<SearchPipeline> pipelines = search_pipelines(config, o.gpus, o.recipe, o.report_progress);
  for (std::int64_t tp = 1; tp <= cluster.gpus_per_node && tp <= o.gpus; tp *= 2) {
    for (std::int64_t cp = 1; cp <= 8 && tp * cp <= o.gpus; cp *= 2) {
      for (const SearchPipeline& pipeline : pipelines) {
        const std::int64_t pp = pipeline.pp;
        if (o.gpus % (tp * cp * pp) != 0) continue;
        const std::int64_t dp = o.gpus / (tp * cp * pp);
        for (std::int64_t ep = 1; ep <= experts; ep *= 2) {
          if (experts % ep != 0) continue;
          for (const std::int64_t etp : {std::int64_t{1}, tp}) {
            if (tp > 1 && etp == tp && !config.ffn.is_moe()) continue;  // ETP only matters with experts
            for (const std::int64_t b : choices.micro_batch_sizes) {
              // b·s·DP tokens, checked: a product past the global batch cannot divide it.
              const std::optional<std::int64_t> per_micro_batch =
                  detail::product_within({b, o.seq_len, dp}, o.global_batch_tokens);
              if (!per_micro_batch || o.global_batch_tokens % *per_micro_batch != 0) {
                if (result.batch_skipped++ == 0) result.first_batch_skip = {b, dp};
                continue;
              }
              const std::int64_t m = o.global_batch_tokens / *per_micro_batch;
              for (const RecomputeSpec& rc : choices.recomputes) {
                for (const bool dist : choices.distributed_optimizer) {
                  search_progress(o.report_progress, enumerating, ++result.enumerated, 0);
                  ParallelLayout l = held;
                  l.tp = tp;
                  l.sequence_parallel = tp > 1;
                  l.cp = cp;
                  l.pp = pp;
                  l.virtual_stages = pipeline.v;
                  l.split = pipeline.split;
                  l.loop_placement = pipeline.placement;
                  l.dp = dp;
                  l.gpus = o.gpus;
                  l.ep = ep;
                  l.etp = config.ffn.is_moe() ? etp : 0;
                  l.micro_batch_size = b;
                  l.micro_batches = m;
                  l.seq_len = o.seq_len;
                  l.recompute = rc;
                  l.distributed_optimizer = dist;
                  l.imbalance = config.ffn.is_moe() ? o.imbalance : 1.0;
                  if (!config.ffn.is_moe()) l.capacity_factor = 0.0;
                  visit(l);
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

/// A ranked layout with its enumeration position: the order of ranks_before(), ties to the first
/// enumerated (what a stable sort of the enumeration gives).
struct Ranked {
  RankedLayout ranked;
  std::size_t position = 0;
};

bool ranked_before(const Ranked& a, const Ranked& b) {
  if (ranks_before(a.ranked, b.ranked)) return true;
  if (ranks_before(b.ranked, a.ranked)) return false;
  return a.position < b.position;
}

/// Counts `l` in result.valid when it is valid for `config` on `cluster` (its dispatcher's limits
/// there too: layout/dispatcher_limits.hpp); otherwise keeps its reason as the space's first
/// rejection while no valid layout has been seen.
bool count_if_valid(const ParallelLayout& l, const ArchConfig& config, const ClusterSpec& cluster,
                    LayoutSearchResult& result) {
  std::string why = l.validation_error(config);
  if (why.empty()) why = detail::dispatcher_cluster_error(l, config, cluster.nvlink_domain());
  if (!why.empty()) {
    if (result.valid == 0 && result.first_rejection.empty()) result.first_rejection = why;
    return false;
  }
  ++result.valid;
  return true;
}

/// The exhaustive reference: every fitting layout timed through the row path.
LayoutSearchResult search_exhaustive(const TimeModel& model, const ArchConfig& config, const ClusterSpec& cluster,
                                     const LayoutSearchOptions& o) {
  LayoutSearchResult result;
  PartTimesCache cache;
  std::vector<Ranked> ranked;
  enumerate_layouts(config, cluster, o, result, [&](const ParallelLayout& l) {
    if (!count_if_valid(l, config, cluster, result)) return;
    ++result.memory_checked;
    TrainingMemory mem = training_memory(config, l, cluster);
    if (!detail::fits_search(mem, o)) return;
    ++result.fitting;
    ++result.timed;
    ClusterStepTime time = assemble_step_time(model, config, mem, cluster, o.time,
                                              layer_times(model, config, l, o.time, &cache));
    ranked.push_back({{std::move(mem), std::move(time)}, ranked.size()});
  });
  search_progress(o.report_progress, enumerating, result.enumerated, result.enumerated);
  const std::size_t keep = std::min(o.keep, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep), ranked.end(), ranked_before);
  for (std::size_t i = 0; i < keep; ++i) result.layouts.push_back(std::move(ranked[i].ranked));
  return result;
}

/// The layer times a layout's shards need depend on TP (and SP), CP, the micro-batch size, EP, ETP
/// and the recompute kind (layer_times()), not on PP, V, DP, m or the optimizer.
using ShardKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, int>;

ShardKey shard_key(const ParallelLayout& l) {
  return {l.tp, l.cp, l.micro_batch_size, l.ep, l.etp, static_cast<int>(l.recompute.kind)};
}

/// A lower bound of assemble_step_time(...).seconds_per_step for `l` with these layer times:
///
///   seconds_per_step = max_s (m·t_s + exposed_s + late_s) + (PP − 1)/V · max_s t_s
///                    ≥ (m + (PP − 1)/V) · max_s t'_s,
///
/// exposed_s, late_s ≥ 0 and t'_s ≤ t_s: t_s without the embedding, LM head and final norm (their
/// part times are non-negative; checked: 0, no bound, when one is not). `stages` holds each
/// pipeline rank's executions. The product and sum are rounded as the step time's own terms, so
/// floating point keeps the inequality.
double slowest_stage_seconds(const ParallelLayout& l, const LayerTimes& times,
                             const std::vector<StageExecutions>& stages) {
  double slowest = 0.0;
  for (const StageExecutions& e : stages) slowest = std::max(slowest, stage_micro_batch_seconds(l, times, e, false, false, false));
  return slowest;
}

/// The bound from the slowest stage (slowest_stage_seconds(): it depends on the layout only through
/// its layer times, its recompute and its stages, so a search keeps it per (times, stages)).
double compute_bound_seconds(const ParallelLayout& l, const LayerTimes& times, double slowest) {
  if (times.base3.embedding < 0.0 || times.base3.head < 0.0 || times.base3.final_norm < 0.0) return 0.0;
  return static_cast<double>(l.micro_batches) * slowest +
         pipeline_bubble_micro_batches(l.pp, l.virtual_stages) * slowest;
}

/// The slowest stage's micro-batch seconds per (layer times, stages) of one search: the shard key
/// fixes the recompute kind (and so the recipe's recompute spec) and the stages' key the layers.
class BoundCache {
 public:
  double bound(const ParallelLayout& l, const LayerTimes& times, const std::vector<StageExecutions>& stages) {
    auto it = slowest_.find({&times, &stages});
    if (it == slowest_.end()) it = slowest_.emplace(std::make_pair(&times, &stages), slowest_stage_seconds(l, times, stages)).first;
    return compute_bound_seconds(l, times, it->second);
  }

 private:
  std::map<std::pair<const LayerTimes*, const std::vector<StageExecutions>*>, double> slowest_;
};

/// A valid layout of the space, its layer times and its bound.
struct SpacePoint {
  ParallelLayout layout;
  const LayerTimes* times = nullptr;
  double bound_seconds = 0.0;
  std::optional<TrainingMemory> memory;  ///< count_fitting: checked up front (kept when it fits)
};

/// The bound-pruned search. `sharing`: the caches of the config's structure (its own when none) and
/// the step time above which a layout need not be timed (search/structure_share.hpp).
LayoutSearchResult search_pruned(const TimeModel& model, const ArchConfig& config, const ClusterSpec& cluster,
                                 const LayoutSearchOptions& o, const detail::SearchSharing& sharing) {
  LayoutSearchResult result;
  std::optional<detail::StructureShare> own;
  detail::StructureShare& share = sharing.share != nullptr ? *sharing.share : own.emplace(sharing.reference);
  const double prune_above = sharing.prune_above_seconds;
  std::map<ShardKey, LayerTimes> times_by_shard;
  BoundCache bounds;
  std::vector<SpacePoint> points;
  enumerate_layouts(config, cluster, o, result, [&](const ParallelLayout& l) {
    if (!count_if_valid(l, config, cluster, result)) return;
    SpacePoint p;
    p.layout = l;
    auto t = times_by_shard.find(shard_key(l));
    if (t == times_by_shard.end()) {
      t = times_by_shard.emplace(shard_key(l), layer_times(model, config, l, o.time, &share.indexed())).first;
    }
    p.times = &t->second;
    p.bound_seconds = bounds.bound(l, *p.times, share.stage_executions_of(config, l));
    if (o.count_fitting) {
      ++result.memory_checked;
      TrainingMemory mem = training_memory(config, l, cluster);
      if (!detail::fits_search(mem, o)) return;
      ++result.fitting;
      p.memory = std::move(mem);
    }
    if (p.bound_seconds > prune_above + 1e-9 * std::abs(prune_above)) return;  // cannot matter to the caller
    points.push_back(std::move(p));
  });
  // Best first by bound; a layout whose bound exceeds the keep-th best time cannot enter the list,
  // nor can any after it.
  std::vector<std::size_t> order(points.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return points[a].bound_seconds < points[b].bound_seconds; });
  search_progress(o.report_progress, enumerating, result.enumerated, result.enumerated);
  std::vector<Ranked> kept;  // sorted by ranked_before, at most o.keep
  std::int64_t visited = 0;
  for (const std::size_t i : order) {
    search_progress(o.report_progress, timing, visited++, static_cast<std::int64_t>(points.size()));
    SpacePoint& p = points[i];
    if (kept.size() == o.keep) {
      const double worst = kept.back().ranked.time.seconds_per_step;
      if (p.bound_seconds > worst + 1e-9 * std::abs(worst)) break;
    }
    if (!p.memory) {
      ++result.memory_checked;
      TrainingMemory mem = training_memory(config, p.layout, cluster);
      if (!detail::fits_search(mem, o)) continue;
      ++result.fitting;
      p.memory = std::move(mem);
    }
    ++result.timed;
    Ranked r{{*p.memory, assemble_step_time(model, config, *p.memory, cluster, o.time, *p.times)}, i};
    const auto at = std::upper_bound(kept.begin(), kept.end(), r, ranked_before);
    if (kept.size() == o.keep && at == kept.end()) continue;
    kept.insert(at, std::move(r));
    if (kept.size() > o.keep) kept.pop_back();
  }
  search_progress(o.report_progress, timing, static_cast<std::int64_t>(points.size()), static_cast<std::int64_t>(points.size()));
  // The kept layouts again through the row path: the same seconds, with the out-of-range flags.
  for (Ranked& r : kept) {
    const TrainingMemory& mem = r.ranked.memory;
    ClusterStepTime time = assemble_step_time(model, config, mem, cluster, o.time,
                                              layer_times(model, config, mem.layout, o.time, &share.rows()));
    if (time.seconds_per_step != r.ranked.time.seconds_per_step) {
      const ParallelLayout& l = mem.layout;
      throw Error(fmt::format("internal: the indexed and row paths time {} at TP {} CP {} PP {} V {} EP {} differently "
                              "({} and {} s a step)",
                              config.name, l.tp, l.cp, l.pp, l.virtual_stages, l.ep, r.ranked.time.seconds_per_step,
                              time.seconds_per_step),
                  "layout search");
    }
    r.ranked.time = std::move(time);
    result.layouts.push_back(std::move(r.ranked));
  }
  return result;
}

LayoutSearchResult checked_layout_search(const TimeModel& model, const ArchConfig& config, const ClusterSpec& cluster,
                                         const LayoutSearchOptions& o, const detail::SearchSharing& sharing) {
  detail::check_layout_search_options(o, cluster);
  detail::check_one_recipe(model, o.recipe.base);
  LayoutSearchResult found =
      o.exhaustive ? search_exhaustive(model, config, cluster, o) : search_pruned(model, config, cluster, o, sharing);
  if (found.valid > 0) found.first_rejection.clear();
  return found;
}

}  // namespace

LayoutSearchResult search_layouts(const TimeModel& model, const ArchConfig& config, const ClusterSpec& cluster,
                                  const LayoutSearchOptions& o) {
  return checked_layout_search(model, config, cluster, o, detail::SearchSharing{});
}

LayoutSearchResult detail::search_layouts_shared(const TimeModel& model, const ArchConfig& config,
                                                 const ClusterSpec& cluster, const LayoutSearchOptions& o,
                                                 const SearchSharing& sharing) {
  return checked_layout_search(model, config, cluster, o, sharing);
}

}  // namespace budget
